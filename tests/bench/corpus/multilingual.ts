import { assistant, type Conversation, system, toolRound, user } from "./types";

/** Non-Latin scripts (Chinese, Japanese, Russian, Arabic, Hindi), emoji, and a mix. */

export const CHINESE_TEXT =
  "长城并不是一道连续的城墙，而是由许多不同朝代修建的城墙、关隘和烽火台组成的防御体系。秦始皇统一六国后，把战国时期燕、赵、秦等国的长城连接起来；今天游客在北京附近看到的八达岭和慕田峪，大多是明朝时重修的。明长城主要用砖石砌成，东起鸭绿江畔的虎山，西至甘肃的嘉峪关，全长八千八百多公里。";

export const JAPANESE_TEXT =
  "日本の桜の開花は、毎年気象庁や民間の気象会社が予想を発表します。開花の目安になるのは主にソメイヨシノで、九州や四国では三月下旬、東京では三月末ごろ、東北では四月中旬、北海道では五月上旬に咲くことが多いです。満開になってから散るまでは一週間ほどしかないため、お花見の計画は天気予報をこまめに確認しながら立てるのがおすすめです。";

export const RUSSIAN_TEXT =
  "Транссибирская магистраль — самая длинная железная дорога в мире: от Москвы до Владивостока около 9 300 километров. Поезд «Россия» проходит этот путь примерно за шесть суток, пересекая восемь часовых поясов, Урал, бескрайнюю тайгу и южный берег Байкала. Строительство началось в 1891 году и велось одновременно с обоих концов.";

export const ARABIC_TEXT =
  "تُعدّ القهوة جزءًا أساسيًا من الضيافة العربية، إذ يُقدَّم الفنجان الأول للضيف باليد اليمنى دائمًا. وتُحمَّص حبوب القهوة العربية تحميصًا خفيفًا، ثم تُطحن وتُغلى مع الهيل، وأحيانًا مع الزعفران أو القرنفل. ومن العادات المعروفة أن يهزّ الضيف الفنجان برفق عندما يكتفي، إشارةً إلى أنه لا يريد المزيد.";

export const HINDI_TEXT =
  "दिवाली रोशनी का त्योहार है, जिसे पूरे भारत में बड़े उत्साह से मनाया जाता है। लोग अपने घरों की सफ़ाई करते हैं, दीये और रंगोली से सजावट करते हैं, और शाम को लक्ष्मी पूजा के बाद मिठाइयाँ बाँटते हैं। यह त्योहार अंधकार पर प्रकाश और बुराई पर अच्छाई की जीत का प्रतीक माना जाता है।";

export const MULTILINGUAL: readonly Conversation[] = [
  {
    name: "zh-great-wall",
    category: "chinese",
    messages: [
      user("长城到底有多长？是一整道墙吗？"),
      assistant(CHINESE_TEXT),
      user("如果我只有一天时间，从北京出发去哪一段比较好？"),
      assistant(
        "如果只有一天，推荐去慕田峪长城。它离北京市区大约七十公里，开车一个半小时左右；游客比八达岭少，植被也更好。可以坐缆车上去，走一段城墙后再坐滑道下来。建议早上八点前出发，避开旅游团的高峰，并带上足够的水和防晒用品。",
      ),
    ],
  },
  {
    name: "zh-code-question",
    category: "chinese",
    messages: [
      system("你是一位耐心的编程老师，请用简体中文回答，并给出简短的代码示例。"),
      user("Python 里的列表推导式是什么？和普通的 for 循环有什么区别？"),
      assistant(
        "列表推导式是一种用一行代码生成列表的写法，例如 `squares = [x * x for x in range(10) if x % 2 == 0]`，它会得到 0 到 9 之间所有偶数的平方。与普通的 for 循环相比，它更简洁，通常也稍快一些，因为循环在解释器内部完成。不过，如果逻辑很复杂、需要多层嵌套或者有副作用，用普通的 for 循环会更容易阅读和调试。",
      ),
      user("那字典推导式呢？"),
    ],
  },
  {
    name: "zh-short",
    category: "chinese",
    messages: [
      user("你好！今天北京天气怎么样？"),
      assistant("你好！我无法查看实时天气，建议你打开天气应用或者搜索“北京天气”。"),
    ],
  },
  {
    name: "ja-sakura",
    category: "japanese",
    messages: [
      user("桜はいつ頃咲きますか？四月に東京へ行く予定です。"),
      assistant(JAPANESE_TEXT),
      user("東京でおすすめのお花見スポットを三つ教えてください。"),
      assistant(
        "東京の定番は、上野恩賜公園、新宿御苑、目黒川の三つです。上野公園は約八百本の桜が並び、にぎやかな雰囲気が楽しめます。新宿御苑は入園料がかかりますが、広々としていて種類も多く、落ち着いてお花見ができます。目黒川は川沿いの桜並木が美しく、夜のライトアップも人気です。",
      ),
    ],
  },
  {
    name: "ja-business-email",
    category: "japanese",
    messages: [
      system("あなたはビジネス日本語の専門家です。丁寧で自然な敬語を使ってください。"),
      user("取引先に、納品が一週間遅れることをお詫びするメールを書いてください。"),
      assistant(
        "件名：納品日延期のお詫び\n\n株式会社〇〇\n営業部 〇〇様\n\nいつも大変お世話になっております。株式会社△△の山田でございます。\n\nこの度、ご注文いただきました商品につきまして、部品の入荷遅延により、納品日を当初の六月十日から六月十七日へ延期させていただきたく、ご連絡いたしました。ご迷惑をおかけし、誠に申し訳ございません。\n\n今後はこのようなことがないよう、調達体制を見直してまいります。何卒ご理解賜りますよう、よろしくお願い申し上げます。",
      ),
    ],
  },
  {
    name: "ja-short",
    category: "japanese",
    messages: [
      user("「ありがとう」を丁寧に言うと？"),
      assistant("「ありがとうございます」や「誠にありがとうございます」が丁寧な言い方です。"),
    ],
  },
  {
    name: "ru-trans-siberian",
    category: "russian",
    messages: [
      user("Расскажи о Транссибирской магистрали. Сколько ехать от Москвы до Владивостока?"),
      assistant(RUSSIAN_TEXT),
      user("А где лучше всего сделать остановку, если хочется увидеть Байкал?"),
      assistant(
        "Лучше всего выйти в Иркутске: оттуда около 70 километров до посёлка Листвянка на берегу Байкала, туда ходят маршрутки и автобусы. Если есть ещё пара дней, можно доехать до Слюдянки и прокатиться по Кругобайкальской железной дороге — это один из самых красивых участков пути.",
      ),
    ],
  },
  {
    name: "ru-tech-support",
    category: "russian",
    messages: [
      system(
        "Ты — вежливый специалист технической поддержки. Отвечай по-русски, коротко и по шагам.",
      ),
      user("Ноутбук перестал видеть Wi‑Fi после обновления Windows. Что делать?"),
      assistant(
        "1. Проверьте, не включён ли режим «в самолёте» и не выключен ли адаптер клавишей Fn.\n2. Откройте «Диспетчер устройств» → «Сетевые адаптеры», найдите беспроводной адаптер и выберите «Обновить драйвер».\n3. Если не помогло — «Откатить драйвер» на вкладке «Драйвер».\n4. В крайнем случае выполните «Сброс сети» в параметрах и перезагрузите компьютер.",
      ),
      user("В диспетчере устройств адаптера вообще нет."),
    ],
  },
  {
    name: "ru-short",
    category: "russian",
    messages: [user("Как будет «кошка» по-английски?"), assistant("«Кошка» по-английски — cat.")],
  },
  {
    name: "ar-coffee",
    category: "arabic",
    messages: [
      user("ما هي آداب تقديم القهوة العربية؟"),
      assistant(ARABIC_TEXT),
      user("وكم فنجانًا يشرب الضيف عادةً؟"),
      assistant(
        "جرت العادة أن يشرب الضيف فنجانًا واحدًا إلى ثلاثة فناجين. ويُسكب في كل مرة قليل من القهوة فقط، لا يتجاوز ربع الفنجان تقريبًا، ويستمر المضيف في الصبّ حتى يهزّ الضيف فنجانه.",
      ),
    ],
  },
  {
    name: "ar-study-plan",
    category: "arabic",
    messages: [
      system("أنت مساعد تعليمي. أجب باللغة العربية الفصحى وبخطوات واضحة."),
      user("أريد خطة لتعلم البرمجة بلغة بايثون خلال ثلاثة أشهر، ساعة واحدة يوميًا."),
      assistant(
        "الشهر الأول: الأساسيات — المتغيرات وأنواع البيانات والشروط والحلقات والدوال، مع حلّ تمرين صغير كل يوم.\nالشهر الثاني: هياكل البيانات والتعامل مع الملفات والمكتبات الشائعة مثل requests وpandas، وبناء مشروعين صغيرين.\nالشهر الثالث: مشروع متكامل من اختيارك، مثل أداة لتحليل مصاريفك الشهرية، مع تعلّم Git ونشر الكود على GitHub.",
      ),
    ],
  },
  {
    name: "hi-diwali",
    category: "hindi",
    messages: [
      user("दिवाली क्यों मनाई जाती है?"),
      assistant(HINDI_TEXT),
      user("दिवाली पर कौन-कौन सी मिठाइयाँ बनती हैं?"),
      assistant(
        "दिवाली पर आमतौर पर लड्डू, काजू कतली, गुलाब जामुन, बर्फ़ी, जलेबी, गुजिया और सोन पापड़ी बनाई या खरीदी जाती हैं। कई परिवारों में चकली और नमकपारे जैसे नमकीन भी बनते हैं।",
      ),
    ],
  },
  {
    name: "hi-short",
    category: "hindi",
    messages: [
      user("नमस्ते! आप कैसे हैं?"),
      assistant("नमस्ते! मैं ठीक हूँ, धन्यवाद। मैं आपकी क्या मदद कर सकता हूँ?"),
    ],
  },
  {
    name: "emoji-party",
    category: "emoji",
    messages: [
      user("Help me write a birthday message for my sister 🎂🎉 she loves cats 🐱 and hiking 🥾⛰️"),
      assistant(
        "Happy birthday, sis! 🎂🎉 Wishing you a year full of mountain views ⛰️🌄, trails that never end 🥾✨ and cats that actually come when you call them 🐱😹. Love you to the summit and back! 💖🏔️",
      ),
      user("more emojis pls 😂😂😂 and add a 🦄"),
      assistant(
        "🎂🎉🥳 HAPPY BIRTHDAY SIS!!! 🥳🎉🎂\n🐱🐈🐈‍⬛ To the queen of cats 👑🐾\n🥾⛰️🌲 and conqueror of every trail 🏔️🚩\n🦄✨ Stay magical, stay wild 🌈💫\n💖💖💖 Love you more than 🐱 love 📦📦📦",
      ),
    ],
  },
  {
    name: "emoji-flags-skin-tones",
    category: "emoji",
    messages: [
      user("🇫🇷🇯🇵🇧🇷🇮🇳🇳🇬 which countries are these flags?"),
      assistant("🇫🇷 France, 🇯🇵 Japan, 🇧🇷 Brazil, 🇮🇳 India and 🇳🇬 Nigeria."),
      user("👋🏻👋🏼👋🏽👋🏾👋🏿 and what are these?"),
      assistant(
        "The same waving hand 👋 with the five skin-tone modifiers, from light 🏻 to dark 🏿. Each one is the base emoji followed by a modifier code point, so one visible emoji is two code points.",
      ),
    ],
  },
  {
    name: "mixed-translation-tool",
    category: "mixed",
    messages: [
      system(
        "You translate short phrases. Use the translate tool, then present the results as a list.",
      ),
      user(
        "Translate “Where is the train station?” into Chinese, Japanese, Russian, Arabic and Hindi.",
      ),
      ...toolRound(
        "call_Tr4nsL4t3Tr4nsL4t3Tr4n",
        "translate",
        { text: "Where is the train station?", targets: ["zh", "ja", "ru", "ar", "hi"] },
        {
          source: "en",
          translations: {
            zh: "火车站在哪里？",
            ja: "駅はどこですか？",
            ru: "Где находится вокзал?",
            ar: "أين محطة القطار؟",
            hi: "रेलवे स्टेशन कहाँ है?",
          },
        },
      ),
      assistant(
        "- Chinese: 火车站在哪里？\n- Japanese: 駅はどこですか？\n- Russian: Где находится вокзал?\n- Arabic: أين محطة القطار؟\n- Hindi: रेलवे स्टेशन कहाँ है?",
      ),
    ],
  },
];
