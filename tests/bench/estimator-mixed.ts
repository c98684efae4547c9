import type { ModelMessage } from "ai";
import { CORPUS, type Conversation } from "./corpus";
import { assistant, system, toolRound, user } from "./corpus/types";

/**
 * The estimator benchmark's mixed set: the corpus (real agent conversations with code and
 * JSON tool output) interleaved with generated conversations carrying CJK prose and
 * digit-heavy text — tables of numbers, logs, CSV — where real tokenizers disagree most
 * with o200k. Generated from a fixed seed, so every run sends the same prompts.
 */

const SEED = 20_261_126;
const GENERATED_PER_KIND = 12;

/** mulberry32: a small, well-mixed 32-bit PRNG; deterministic for a seed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

type Rng = () => number;
const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng() * items.length)] as T;
const int = (rng: Rng, min: number, max: number) => min + Math.floor(rng() * (max - min + 1));

// Our own sentences, recombined: Chinese, Japanese and Korean prose on everyday topics.
const CHINESE = [
  "我们下周二要把新版本部署到生产环境，请先确认数据库迁移已经在测试环境跑通。",
  "这个城市的地铁每天早上七点到九点最拥挤，很多人选择骑共享单车上班。",
  "如果缓存命中率持续下降，可以先检查键的过期时间是不是设置得太短。",
  "周末我们去了郊外的茶园，山上的空气很清新，茶农还教我们怎么炒茶。",
  "报告里提到的三个问题中，最紧急的是登录接口偶尔返回超时。",
  "请把会议纪要整理成要点，发给项目组的每一位成员，并抄送产品经理。",
  "春节前后火车票非常难买，很多人会提前一个月在网上抢票。",
  "这段代码的主要问题是在循环里重复查询数据库，应该改成批量读取。",
  "她在图书馆找到了一本关于宋代建筑的旧书，里面有很多手绘的插图。",
  "为了降低延迟，我们把静态资源放到了离用户更近的节点上。",
  "老师建议我们每天至少朗读二十分钟，这样发音会进步得更快。",
  "用户反馈说夜间模式下有些按钮的文字看不清楚，需要调整对比度。",
];
const JAPANESE = [
  "明日の打ち合わせは午後二時からに変更になりましたので、資料の準備をお願いします。",
  "このライブラリは設定ファイルを読み込むときに環境変数を優先します。",
  "駅前の新しいパン屋さんは朝七時から開いていて、いつも行列ができています。",
  "エラーログを確認したところ、接続プールが上限に達していたことがわかりました。",
  "週末は天気が良ければ、家族で近くの公園にピクニックに行く予定です。",
  "レビューの指摘を反映して、関数の名前をもっと分かりやすいものに変えました。",
];
const KOREAN = [
  "다음 주 회의에서는 새 기능의 출시 일정을 다시 논의할 예정입니다.",
  "서버 응답 시간이 길어지면 먼저 느린 쿼리 로그를 확인해 보세요.",
  "주말에 친구들과 한강 공원에서 자전거를 탔는데 날씨가 정말 좋았습니다.",
];
const ENGLISH_ASKS = [
  "Can you summarize the points above in two sentences?",
  "Please translate the last paragraph into English.",
  "What would you check first?",
  "Rewrite this as a short checklist.",
];

function cjkParagraph(rng: Rng, sentences: number): string {
  const pool = rng() < 0.6 ? CHINESE : rng() < 0.7 ? JAPANESE : KOREAN;
  return Array.from({ length: sentences }, () => pick(rng, pool)).join("");
}

function cjkConversation(rng: Rng, index: number): Conversation {
  const messages: ModelMessage[] = [system("You are a helpful bilingual assistant.")];
  const turns = int(rng, 2, 5);
  for (let turn = 0; turn < turns; turn++) {
    const ask = cjkParagraph(rng, int(rng, 2, 6));
    messages.push(user(rng() < 0.3 ? `${ask}\n\n${pick(rng, ENGLISH_ASKS)}` : ask));
    if (rng() < 0.3) {
      const id = `call_cjk_${index}_${turn}`;
      messages.push(
        ...toolRound(
          id,
          "search_notes",
          { query: cjkParagraph(rng, 1).slice(0, 12), limit: 5 },
          {
            results: Array.from({ length: int(rng, 2, 4) }, (_, i) => ({
              id: `note-${int(rng, 100, 999)}`,
              title: cjkParagraph(rng, 1).slice(0, 16),
              snippet: cjkParagraph(rng, 2),
              rank: i + 1,
            })),
          },
        ),
      );
    }
    messages.push(assistant(cjkParagraph(rng, int(rng, 3, 8))));
  }
  return { name: `generated cjk ${index + 1}`, category: "chinese", messages };
}

const HOSTS = ["api-1", "api-2", "worker-7", "db-primary", "cache-3"];
const LEVELS = ["INFO", "WARN", "ERROR", "DEBUG"];
const PATHS = ["/v1/orders", "/v1/users/me", "/healthz", "/v1/search", "/v1/checkout"];

function logLines(rng: Rng, count: number): string {
  const lines: string[] = [];
  let ms = int(rng, 0, 86_399_999);
  for (let i = 0; i < count; i++) {
    ms += int(rng, 3, 4_000);
    const time = new Date(Date.UTC(2026, 10, int(rng, 1, 28)) + ms).toISOString();
    const ip = `10.${int(rng, 0, 255)}.${int(rng, 0, 255)}.${int(rng, 1, 254)}`;
    lines.push(
      `${time} ${pick(rng, LEVELS)} ${pick(rng, HOSTS)} ${ip} ${pick(rng, PATHS)} ` +
        `status=${pick(rng, [200, 200, 201, 304, 404, 500, 503])} latency_ms=${int(rng, 1, 9_999)} ` +
        `bytes=${int(rng, 100, 999_999)} req=${int(rng, 1e8, 9e8).toString(16)}`,
    );
  }
  return lines.join("\n");
}

function numberTable(rng: Rng, rows: number): string {
  const header = "| sensor | t (s) | temp (°C) | pressure (kPa) | humidity (%) | reading |";
  const lines = [header, "|---|---|---|---|---|---|"];
  for (let i = 0; i < rows; i++) {
    lines.push(
      `| S${int(rng, 1000, 9999)} | ${int(rng, 0, 86_400)} | ${(rng() * 60 - 10).toFixed(2)} | ` +
        `${(90 + rng() * 20).toFixed(3)} | ${(rng() * 100).toFixed(1)} | ${int(rng, 0, 4_294_967)} |`,
    );
  }
  return lines.join("\n");
}

function csvBlock(rng: Rng, rows: number): string {
  const lines = ["date,open,high,low,close,volume"];
  for (let i = 0; i < rows; i++) {
    const open = 100 + rng() * 400;
    lines.push(
      `2026-${String(int(rng, 1, 12)).padStart(2, "0")}-${String(int(rng, 1, 28)).padStart(2, "0")},` +
        `${open.toFixed(2)},${(open * 1.03).toFixed(2)},${(open * 0.97).toFixed(2)},` +
        `${(open * (0.98 + rng() * 0.04)).toFixed(2)},${int(rng, 10_000, 99_999_999)}`,
    );
  }
  return lines.join("\n");
}

function digitsConversation(rng: Rng, index: number): Conversation {
  const messages: ModelMessage[] = [system("You are a careful data and operations assistant.")];
  const turns = int(rng, 2, 4);
  for (let turn = 0; turn < turns; turn++) {
    const kind = int(rng, 0, 2);
    if (kind === 0) {
      messages.push(
        user(
          `Here are today's sensor readings:\n\n${numberTable(rng, int(rng, 8, 30))}\n\nWhich sensors look off?`,
        ),
      );
    } else if (kind === 1) {
      const id = `call_logs_${index}_${turn}`;
      messages.push(user("Why did the checkout fail around noon? Pull the logs."));
      messages.push(
        ...toolRound(
          id,
          "read_logs",
          { since: "2026-11-26T11:45:00Z", limit: 40 },
          logLines(rng, int(rng, 10, 40)),
        ),
      );
    } else {
      const id = `call_prices_${index}_${turn}`;
      messages.push(user("Fetch the daily prices and compute the average close."));
      messages.push(
        ...toolRound(
          id,
          "fetch_prices",
          { symbol: "FOLD", days: 30 },
          {
            rows: Array.from({ length: int(rng, 8, 25) }, () => [
              int(rng, 20_260_101, 20_261_231),
              Number((100 + rng() * 400).toFixed(2)),
              int(rng, 10_000, 99_999_999),
            ]),
          },
        ),
      );
      messages.push(assistant(`Raw export for reference:\n\n${csvBlock(rng, int(rng, 5, 15))}`));
    }
    messages.push(
      assistant(
        `The averages are ${(rng() * 500).toFixed(2)} and ${(rng() * 500).toFixed(2)}; ` +
          `outliers at rows ${int(rng, 1, 30)}, ${int(rng, 1, 30)} and ${int(rng, 1, 30)}.`,
      ),
    );
  }
  return { name: `generated digits ${index + 1}`, category: "mixed", messages };
}

/** Corpus conversations between each generated pair: the corpus stays the bulk of the set. */
const CORPUS_PER_ROUND = 3;

/** The corpus with the generated CJK and digit-heavy conversations woven in (deterministic). */
export function mixedConversations(): Conversation[] {
  const rng = random(SEED);
  const cjk = Array.from({ length: GENERATED_PER_KIND }, (_, i) => cjkConversation(rng, i));
  const digits = Array.from({ length: GENERATED_PER_KIND }, (_, i) => digitsConversation(rng, i));
  const rounds = Math.max(GENERATED_PER_KIND, Math.ceil(CORPUS.length / CORPUS_PER_ROUND));
  const out: Conversation[] = [];
  for (let i = 0; i < rounds; i++) {
    out.push(...CORPUS.slice(i * CORPUS_PER_ROUND, (i + 1) * CORPUS_PER_ROUND));
    const generated = [cjk[i], digits[i]].filter((c): c is Conversation => c !== undefined);
    out.push(...generated);
  }
  return out;
}
