// `npx tsx tests/bench/estimator-priors.ts`: where the cold class priors in
// lib/context/calibration.ts come from. Text of one class at a time — probes of our own,
// apart from the estimator benchmark's conversations — counted by o200k (Fold's raw count)
// and by each family's real tokenizer; a class's cold prior is the highest ratio any family
// shows on any one probe (a conversation may be all Arabic), so that a first turn
// over-estimates whichever family and language it meets.
import { readFileSync } from "node:fs";
import path from "node:path";
import { CONTENT_CLASSES, type ContentClass } from "@/lib/context/content-class";
import { createEstimator } from "@/lib/context/tokens";
import {
  familyPromptText,
  loadFamilyTokenizer,
  TOKENIZER_FAMILIES,
} from "../fixtures/fake-openai/family-tokens";

const ROOT = path.resolve(import.meta.dirname, "../..");
const file = (relative: string) => readFileSync(path.join(ROOT, relative), "utf8");
/** Digits stripped: they are a class of their own wherever they stand. */
const noDigits = (text: string) => text.replace(/[0-9]/g, "");

/** Probe texts by the class Fold gives them (our own sentences; the repository's own files). */
const PROBES: Partial<Record<ContentClass, { hint: "text" | "tool"; texts: string[] }>> = {
  prose: { hint: "text", texts: [noDigits(file("README.md"))] },
  code: {
    hint: "text",
    texts: ["lib/context/tokens.ts", "lib/context/calibration.ts", "lib/context/budget.ts"].map(
      (f) => `\`\`\`ts\n${noDigits(file(f))}\n\`\`\``,
    ),
  },
  json: {
    hint: "tool",
    texts: [noDigits(JSON.stringify(JSON.parse(file("package.json")), null, 1))],
  },
  cjk: {
    hint: "text",
    texts: [
      "我们在河边找了一家安静的小饭馆，点了几道家常菜，一边吃一边聊起了小时候的事情。后来雨越下越大，大家只好在店里多坐了一会儿。",
      "新的日志系统上线以后，排查问题的时间明显缩短了，但是磁盘占用也涨了不少，需要定期清理旧文件。",
      "引っ越しの準備がなかなか終わらず、週末はずっと段ボールに本を詰めていました。新しい部屋は駅から近くて便利です。",
      "テストが失敗する原因を調べたら、タイムゾーンの設定が環境ごとに違っていたことが分かりました。",
      "오늘 아침에는 버스가 늦게 와서 회의에 조금 늦었지만, 다행히 중요한 안건은 아직 시작하지 않았습니다.",
    ],
  },
  script: {
    hint: "text",
    texts: [
      "Вчера мы весь вечер чинили старый велосипед: поменяли цепь, подкачали колёса и наконец поехали кататься по набережной.",
      "Если сервер отвечает медленно, сначала посмотрите на журнал запросов и проверьте, не закончилось ли место на диске.",
      "Το πρωί πήγαμε στην αγορά και αγοράσαμε φρέσκα φρούτα, ψωμί και λίγο τυρί για το ταξίδι.",
      "ذهبنا في نهاية الأسبوع إلى السوق القديم واشترينا بعض التوابل والقهوة، ثم جلسنا في مقهى صغير نتحدث عن خطط الصيف.",
      "אתמול בערב ישבנו במרפסת, שתינו תה ודיברנו על הטיול שתכננו לחורף הבא.",
      "🎉🎂🎈 🥳👏 🌧️☔🌈 👩‍💻👨‍🍳 🇫🇷🇯🇵🇧🇷 👍🏽👋🏿",
    ],
  },
  indic: {
    hint: "text",
    texts: [
      "कल शाम हम सब दोस्त नदी के किनारे घूमने गए और देर रात तक पुरानी बातें करते रहे।",
      "अगर ऐप बार बार बंद हो जाता है तो पहले नया संस्करण डाउनलोड करके देखिए।",
      "আমরা সকালে বাজারে গিয়ে তাজা সবজি আর মাছ কিনে এনেছিলাম।",
      "เมื่อวานฝนตกหนักมาก เราเลยอยู่บ้านดูหนังและทำอาหารกินกันเอง",
    ],
  },
};

/** Chat framing: a conversation of short messages, less the tokens of their text alone. */
const FRAME_MESSAGES = 8;

async function main(): Promise<void> {
  const estimator = createEstimator();
  /** o200k tokens of each probe in its class. */
  const o200k = new Map<string, number>();
  const probes = Object.entries(PROBES) as [
    ContentClass,
    { hint: "text" | "tool"; texts: string[] },
  ][];
  for (const [cls, probe] of probes) {
    for (const text of probe.texts) {
      const units =
        probe.hint === "tool"
          ? [{ type: "tool-result" as const, toolName: "probe", output: text }]
          : [{ type: "text" as const, text }];
      const tokens = estimator.classTokens([{ units, wireMessages: 0 }]);
      o200k.set(text, tokens[cls]);
      const stray = CONTENT_CLASSES.filter((c) => c !== cls && c !== "frame" && tokens[c] > 0);
      if (stray.length > 0) console.warn(`probe for ${cls} also holds ${stray.join(", ")}`);
    }
  }
  const messages = Array.from({ length: FRAME_MESSAGES }, (_, i) => ({
    role: i % 2 === 0 ? ("user" as const) : ("assistant" as const),
    content: "ok",
  }));
  const frameRaw = estimator.classTokensOfModelMessages(messages).frame;
  const ratios: Record<string, Record<string, number>> = {};
  for (const family of TOKENIZER_FAMILIES) {
    const tokenizer = await loadFamilyTokenizer(family);
    const count = (text: string) => tokenizer.encode(text, { add_special_tokens: false }).length;
    const row: Record<string, number> = {};
    for (const [cls, probe] of probes) {
      row[cls] = Math.max(...probe.texts.map((t) => count(t) / (o200k.get(t) ?? Number.NaN)));
    }
    const framed = count(familyPromptText(family, tokenizer, { messages, tools: undefined }));
    const bare = count(familyPromptText(family, tokenizer, { messages: [], tools: undefined }));
    row.frame = (framed - bare - FRAME_MESSAGES * count("ok")) / frameRaw;
    ratios[family] = row;
    console.log(
      family.padEnd(12),
      Object.entries(row)
        .map(([c, r]) => `${c} ${r.toFixed(3)}`)
        .join("  "),
    );
  }
  const classes = [...probes.map(([c]) => c), "frame"];
  const max = classes.map(
    (c) => `${c} ${Math.max(...Object.values(ratios).map((r) => r[c] ?? 0)).toFixed(3)}`,
  );
  console.log("highest".padEnd(12), max.join("  "));
  const min = classes.map(
    (c) => `${c} ${Math.min(...Object.values(ratios).map((r) => r[c] ?? 0)).toFixed(3)}`,
  );
  console.log("lowest".padEnd(12), min.join("  "));
}

await main();
