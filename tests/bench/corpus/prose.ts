import { assistant, type Conversation, system, user } from "./types";

/** English prose: short questions, long answers, a system prompt now and then. */

export const HELPFUL_SYSTEM =
  "You are Fold, a helpful assistant. Answer clearly and concisely. When you are unsure, say so, and never invent citations, numbers or quotes.";

export const PARAGRAPHS: readonly string[] = [
  "The history of the printing press is often told as the story of a single inventor, but the reality is messier and more interesting. Johannes Gutenberg combined several existing technologies — the screw press used for wine and olive oil, oil-based inks that adhered to metal, and a hand mould for casting type quickly and precisely — into a system that could produce books at a scale no scriptorium could match.",
  "What made the press transformative was not speed alone. A printed book was identical across hundreds of copies, which meant that scholars in Venice and Basel could cite the same page of the same edition and know they were reading the same words. Errors still crept in, of course, but they were now shared errors, and shared errors can be corrected in the next edition.",
  "Within fifty years of Gutenberg's Bible, printing shops had opened in more than two hundred European towns. Historians estimate that somewhere between eight and twenty million books were printed before 1501, a period whose books are still called incunabula, from the Latin word for cradle.",
  "Sourdough starter is a living culture of wild yeast and lactic acid bacteria. Feeding it means discarding most of it and adding fresh flour and water in equal weights; the organisms eat the new starches, produce carbon dioxide and acids, and the cycle repeats. A healthy starter roughly doubles within four to eight hours at room temperature.",
  "If your loaf comes out dense, the usual suspects are an underactive starter, a dough that fermented too briefly, or a kitchen that is colder than you think. Try leaving the bulk fermentation longer, watch the dough rather than the clock, and look for a dome that jiggles and a few bubbles breaking on the surface.",
  "Remote teams fail less often from lack of tools than from lack of shared context. A decision made on a call and never written down is, for everyone who missed the call, a decision that was never made. The cheapest fix is a habit: every meeting ends with two or three sentences posted where the whole team reads them.",
  "Asynchronous writing also forces clarity. When you cannot rely on tone of voice or a quick follow-up question, you have to state the problem, the options you considered, the one you chose and why. That document becomes the team's memory, and new hires read it months later to understand why the system looks the way it does.",
  "The tides are caused mainly by the Moon's gravity pulling on the Earth's oceans, with the Sun contributing a smaller effect. Because the pull is stronger on the side of the Earth facing the Moon and weaker on the far side, the oceans bulge in two places at once, which is why most coastlines see two high tides a day rather than one.",
  "Spring tides, which have nothing to do with the season, happen when the Sun and the Moon line up at new and full moon and their pulls add together. Neap tides happen at the quarter moons, when the two pull at right angles and partly cancel out, so the difference between high and low water is smallest.",
  "A good password manager removes the temptation to reuse passwords, which is the single most common way accounts get taken over. Pair it with a second factor — ideally a hardware key or an authenticator app rather than SMS — and most opportunistic attacks simply move on to an easier target.",
];

export const PROSE: readonly Conversation[] = [
  {
    name: "prose-short-question",
    category: "prose",
    messages: [
      user("What's the difference between weather and climate?"),
      assistant(
        "Weather is what the atmosphere is doing right now or over the next few days — rain tomorrow, a heatwave this week. Climate is the long-run pattern of weather in a place, usually averaged over thirty years or more. Put simply: climate is what you expect, weather is what you get.",
      ),
      user("So one cold winter doesn't disprove global warming?"),
    ],
  },
  {
    name: "prose-printing-press",
    category: "prose",
    messages: [
      system(HELPFUL_SYSTEM),
      user(
        "Can you give me a short history of the printing press? I'm preparing a talk for a book club.",
      ),
      assistant(PARAGRAPHS.slice(0, 3).join("\n\n")),
      user("That's great. How did it change the way people argued about ideas?"),
      assistant(
        "It changed the economics of disagreement. Before print, a controversial pamphlet had to be copied by hand, so it spread slowly and could be suppressed by seizing a few manuscripts. After print, Luther's ninety-five theses were reprinted across the German lands within weeks, and his opponents answered with pamphlets of their own. Arguments became public, fast and cumulative: each side could quote the other's exact words back at them.",
      ),
      user("Could you suggest three discussion questions for the club?"),
    ],
  },
  {
    name: "prose-sourdough",
    category: "prose",
    messages: [
      user("My sourdough keeps coming out flat and dense. What am I doing wrong?"),
      assistant(`${PARAGRAPHS[3]}\n\n${PARAGRAPHS[4]}`),
      user(
        "My kitchen is about 18°C in winter. Should I just leave it out overnight, or will that overproof it?",
      ),
      assistant(
        "At 18 °C an overnight bulk of ten to twelve hours is often about right for a dough with 15–20 % starter, but it depends on how lively your starter is. A safer route is to reduce the starter to 10 % so the dough has more room, or to put it somewhere slightly warmer, like an oven with only the light switched on. Either way, judge by the dough: roughly a 50–75 % rise, a domed surface and a few bubbles on the sides of the container.",
      ),
      user("Thanks! And how long should I bake it for?"),
    ],
  },
  {
    name: "prose-remote-teams",
    category: "prose",
    messages: [
      system(HELPFUL_SYSTEM),
      user(
        "I lead a team of nine engineers spread over four time zones. Decisions keep getting lost and people feel out of the loop. Any advice?",
      ),
      assistant(`${PARAGRAPHS[5]}\n\n${PARAGRAPHS[6]}`),
      user(
        "We tried writing design docs but nobody reads them. People say they are too long and they don't know which ones matter.",
      ),
      assistant(
        "Then make the documents shorter and make their status obvious. A one-page template works well: the problem in two sentences, the options considered, the decision, and who it affects. Put a status line at the very top — proposed, decided, superseded — and keep an index page that lists only the decided ones from the last quarter. People read what is short, current and clearly relevant to them.",
      ),
      user(
        "How do I get the quieter people in other time zones to comment before things are decided?",
      ),
    ],
  },
  {
    name: "prose-tides",
    category: "prose",
    messages: [
      user("Why are there two high tides a day and not just one?"),
      assistant(PARAGRAPHS[7] ?? ""),
      user("And what are spring tides? Are they only in spring?"),
      assistant(PARAGRAPHS[8] ?? ""),
    ],
  },
  {
    name: "prose-security-short",
    category: "prose",
    messages: [
      user("Is a password manager actually safer than a notebook?"),
      assistant(PARAGRAPHS[9] ?? ""),
    ],
  },
];
