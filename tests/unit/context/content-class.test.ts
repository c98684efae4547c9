import { describe, expect, it } from "vitest";
import { PROBE_UNIT_DENSITY } from "@/lib/context/class-priors";
import { classSegments, classTotal, digitGroups } from "@/lib/context/content-class";
import { byteTokenScript, tokenScript } from "@/lib/context/script-tokens";
import { createEstimator } from "@/lib/context/tokens";

const classesOf = (text: string, hint: "text" | "tool" = "text") =>
  classSegments(text, hint).map((s) => s.contentClass);

describe("content classes", () => {
  it("tells prose, code, JSON and each writing system apart line by line", () => {
    expect(classesOf("The meeting moved to Tuesday afternoon, sorry for the noise.")).toEqual([
      "prose",
    ]);
    expect(classesOf('{"status": "ok", "items": ["a", "b"]}')).toEqual(["json"]);
    const scripts: [string, string][] = [
      ["长城并不是一道连续的城墙，而是由许多朝代修建的防御体系。", "han"],
      ["来週の会議は火曜日の午後に変更になりました。", "kana"],
      ["カタカナだけのテキスト", "kana"],
      ["다음 주 회의는 화요일 오후로 바뀌었습니다.", "hangul"],
      ["Транссибирская магистраль — самая длинная железная дорога.", "cyrillic"],
      ["Η συνάντηση μεταφέρθηκε την Τρίτη το απόγευμα.", "greek"],
      ["تم نقل الاجتماع إلى يوم الثلاثاء بعد الظهر.", "arabic"],
      ["הפגישה הועברה ליום שלישי אחר הצהריים.", "hebrew"],
      ["दीवाली रोशनी का त्योहार है और पूरे भारत में मनाई जाती है।", "devanagari"],
      ["காலை வணக்கம், அவர் வீட்டுக்குப் போனார்.", "indic"],
      ["আমরা সকালে বাজারে গিয়েছিলাম।", "indic"],
      ["การประชุมถูกย้ายไปวันอังคารตอนบ่าย", "thai"],
      ["🎉🎂🎈 🥳👏 👩‍💻 🇫🇷🇯🇵 👍🏽", "emoji"],
      ["Հանդիպումը տեղափոխվեց երեքշաբթի։", "script"],
    ];
    for (const [text, expected] of scripts)
      expect([text, classesOf(text)]).toEqual([text, [expected]]);
  });

  it("keeps a line with a few foreign words in its main class", () => {
    expect(classesOf("The café in Москва was closed, so we walked on to the river.")).toEqual([
      "prose",
    ]);
    expect(classesOf("Party time 🎉 with everyone from the office tonight!")).toEqual(["prose"]);
  });

  it("splits a mixed message into runs and keeps the text whole", () => {
    const text = [
      "Here is the fix for the loop:",
      "```ts",
      "for (const row of rows) total += row.amount;",
      "```",
      "| 318274 | 992731 | 120938 |",
      "| 554321 | 778812 | 903112 |",
      "请确认一下这个结果是否正确。",
    ].join("\n");
    const segments = classSegments(text, "text");
    expect(segments.map((s) => s.contentClass)).toEqual(["prose", "code", "prose", "han"]);
    expect(segments.map((s) => s.text).join("")).toBe(text);
  });

  it("counts plain tool output as JSON", () => {
    expect(classesOf("file written successfully to the workspace", "tool")).toEqual(["json"]);
    expect(classesOf("12:00:01 431 ms 200\n12:00:02 388 ms 200", "tool")).toEqual(["json"]);
  });

  it("finds o200k's digit groups: threes from the left, then the rest", () => {
    expect(digitGroups("no numbers here")).toEqual([0, 0, 0]);
    // 1234567 → 123 456 7; 42 → 42; 3.5 → 3 . 5
    expect(digitGroups("id 1234567, 42 items at 3.5")).toEqual([3, 1, 2]);
  });

  it("counts digits as their groups wherever they stand, and the total stays o200k's", () => {
    const estimator = createEstimator();
    const text = "Revenue rose 12% to 4031250 in 2025.\n| 318274 | 992731 |";
    const tokens = estimator.classTokens([{ units: [{ type: "text", text }], wireMessages: 0 }]);
    expect([tokens.digits1, tokens.digits2, tokens.digits3]).toEqual(digitGroups(text));
    expect(tokens.digits3).toBeGreaterThan(0);
    expect(classTotal(tokens)).toBe(estimator.countText(text));
  });

  it("splits the estimator's count by class without changing a one-class text's total", () => {
    const estimator = createEstimator();
    const prose = "A plain sentence about the weather in spring.";
    const tokens = estimator.classTokens([{ units: [{ type: "text", text: prose }] }]);
    expect(tokens.prose).toBe(estimator.countText(prose));
    expect(tokens.frame).toBeGreaterThan(0);
    expect(classTotal(tokens)).toBe(
      estimator.countMessage({ units: [{ type: "text", text: prose }] }),
    );
    const call = estimator.classTokens([
      { units: [{ type: "tool-call", toolName: "read", input: '{"path":"/tmp/a.txt"}' }] },
    ]);
    expect(call.call).toBeGreaterThan(0);
    expect(call.prose + call.json).toBe(0);
  });
  it("counts a writing system's letters beside its tokens, never into the total", () => {
    const estimator = createEstimator();
    const text = "你好！今天北京天气怎么样？";
    const tokens = estimator.classTokens([{ units: [{ type: "text", text }], wireMessages: 0 }]);
    // Eleven Chinese characters; the punctuation is not letters.
    expect(tokens.hanLetters).toBe(11);
    expect(classTotal(tokens)).toBe(estimator.countText(text));
  });

  it("counts a mixed line no sparser than its system's sparsest probe", () => {
    const estimator = createEstimator();
    const line = '{"ru":"Где находится вокзал?","ar":"أين محطة القطار؟","hi":"रेलवे स्टेशन कहाँ है?"}';
    const tokens = estimator.classTokens([
      { units: [{ type: "tool-result", toolName: "t", output: line }], wireMessages: 0 },
    ]);
    // Eighteen Cyrillic letters among JSON and two other systems: far sparser than Russian text.
    const [, lowest] = PROBE_UNIT_DENSITY.cyrillic;
    expect(tokens.cyrillicLetters).toBeCloseTo(lowest * tokens.cyrillic, 6);
    expect(18 / tokens.cyrillic).toBeLessThan(lowest);
  });
  it("counts code's indentation tabs beside its tokens", () => {
    const estimator = createEstimator();
    const code = "```go\nfunc main() {\n\tif ok {\n\t\treturn\n\t}\n}\n```";
    const tokens = estimator.classTokens([
      { units: [{ type: "text", text: code }], wireMessages: 0 },
    ]);
    expect(tokens.codeTabs).toBe(4);
    expect(classTotal(tokens)).toBe(estimator.countText(code));
  });
  it("prices another writing system's words inside a prose line as that system", () => {
    const estimator = createEstimator();
    const text = "Happy birthday 🎂🎉 and greetings from 北京, see you in Москва soon!";
    const tokens = estimator.classTokens([{ units: [{ type: "text", text }], wireMessages: 0 }]);
    expect(classSegments(text, "text").map((s) => s.contentClass)).toEqual(["prose"]);
    expect(tokens.emoji).toBeGreaterThan(0);
    expect(tokens.han).toBeGreaterThan(0);
    expect(tokens.cyrillic).toBeGreaterThan(0);
    // The Latin words stay prose, and the split keeps o200k's total.
    expect(tokens.prose).toBeGreaterThan(tokens.han + tokens.cyrillic + tokens.emoji);
    expect(classTotal(tokens)).toBe(estimator.countText(text));
    // Each system's letters beside its tokens: two Chinese characters, six Cyrillic letters.
    expect(tokens.hanLetters).toBeGreaterThanOrEqual(2);
    expect(tokens.cyrillicLetters).toBeGreaterThanOrEqual(6);
  });

  it("prices Latin words inside a writing system's line as prose, its punctuation as the system", () => {
    const estimator = createEstimator();
    const text = "Python 里的列表推导式，例如 squares = [x * x for x in range(10)]，更简洁。";
    const tokens = estimator.classTokens([{ units: [{ type: "text", text }], wireMessages: 0 }]);
    expect(classSegments(text, "text").map((s) => s.contentClass)).toEqual(["han"]);
    const alone = (part: string) =>
      estimator.classTokens([{ units: [{ type: "text", text: part }], wireMessages: 0 }]);
    // "Python", "squares", "x", "for", "in", "range" are prose; the Chinese and its "，" are han.
    expect(tokens.prose).toBeGreaterThanOrEqual(6);
    expect(tokens.han).toBeGreaterThan(tokens.prose);
    expect(tokens.digits2).toBe(1);
    expect(classTotal(tokens)).toBe(estimator.countText(text));
    // A line of the system alone is all the system's, as before.
    expect(alone("里的列表推导式，更简洁。").prose).toBe(0);
  });

  it("reads a token's writing system from its letters; punctuation and Latin have none", () => {
    expect(tokenScript("ありがとうございます")).toBe("chinese");
    expect(tokenScript("天气")).toBe("chinese");
    expect(tokenScript(" मैं")).toBe("devanagari");
    expect(tokenScript("🎂")).toBe("emoji");
    expect(tokenScript(" Python")).toBeNull();
    expect(tokenScript("。")).toBeNull();
    // A character o200k spells in bytes: its first part tells the block, later parts continue it.
    expect(byteTokenScript([0xf0, 0x9f, 0x8e])).toBe("emoji");
    expect(byteTokenScript([0xe0, 0xa4])).toBe("devanagari");
    expect(byteTokenScript([0x8e, 0x82])).toBe("continues");
    expect(byteTokenScript([0xe1])).toBeNull();
  });
});
