// Probe texts of our own for the estimator's class priors (estimator-priors.ts measures them),
// kept apart from the estimator benchmark's conversations: the priors are never tuned on the
// texts they are judged on.
import { readFileSync } from "node:fs";
import path from "node:path";
import {
  type ContentClass,
  DIGIT_GROUP_CLASSES,
  type DigitGroupClass,
} from "@/lib/context/content-class";

const ROOT = path.resolve(import.meta.dirname, "../..");
const file = (relative: string) => readFileSync(path.join(ROOT, relative), "utf8");
/** Digits stripped: o200k's digit groups are classes of their own wherever they stand. */
const noDigits = (text: string) => text.replace(/[0-9]/g, "");

/**
 * Short everyday messages of our own per writing system: greetings, the time, the weather,
 * food and travel, a line or two each. Short common phrases are where o200k is most
 * efficient (it merges whole common words) and the other families are not, so a class's
 * cold prior has to cover them as well as longer sentences.
 */
const EVERYDAY: Partial<Record<ContentClass, string[]>> = {
  han: [
    "早上好！你吃早饭了吗？",
    "现在几点了？我的手机没电了。",
    "周末我们去爬山吧，天气预报说是晴天。",
    "这家餐厅的饺子特别好吃，你一定要尝尝。",
    "请问去火车站怎么走？",
    "明天要降温了，记得多穿点衣服。",
    "晚饭想吃什么？我们点外卖吧。",
    "谢谢你的帮助，路上注意安全！",
    "我下周要去广州出差，有什么好玩的地方吗？",
    "今天好热啊，我们去买冰淇淋吧。",
    "生日快乐！祝你天天开心。",
    "你周末有空吗？一起去看电影吧。",
    "外面在下雪，路很滑，慢点开车。",
    "早安！今天台北會不會很冷？",
  ],
  kana: [
    "おはようございます！よく眠れましたか？",
    "今何時ですか？",
    "明日は雨が降るそうなので、傘を持って行ってください。",
    "このラーメン屋さん、すごくおいしいですよ。",
    "駅までどうやって行けばいいですか？",
    "お誕生日おめでとう！楽しい一日を。",
    "週末は家族で京都に旅行に行きます。",
    "晩ご飯は何にしようか？",
    "ありがとうございます。また明日会いましょう。",
    "寒くなってきたので、風邪をひかないように気をつけてね。",
    "今度一緒にお茶でもどうですか？",
    "こんにちは！お元気ですか？",
  ],
  hangul: [
    "좋은 아침이에요! 아침 먹었어요?",
    "지금 몇 시예요?",
    "내일 비가 온대요. 우산 꼭 챙기세요.",
    "이 식당 김치찌개가 정말 맛있어요.",
    "지하철역까지 어떻게 가요?",
    "생일 축하해요! 좋은 하루 보내세요.",
    "주말에 부산으로 여행 갈 거예요.",
    "저녁에 뭐 먹을까요?",
    "고마워요. 내일 봐요!",
    "날씨가 추워졌으니 감기 조심하세요.",
    "이번 주말에 같이 영화 볼래요?",
  ],
  cyrillic: [
    "Доброе утро! Как спалось?",
    "Который час?",
    "Завтра обещают дождь, возьми зонтик.",
    "Здесь очень вкусный борщ, обязательно попробуй.",
    "Как пройти к вокзалу?",
    "С днём рождения! Всего самого лучшего.",
    "На выходных мы едем в Казань.",
    "Что будем есть на ужин?",
    "Спасибо большое, до завтра!",
    "Похолодало, одевайся теплее.",
    "Привіт! Як справи?",
    "Добър ден! Къде е гарата?",
  ],
  greek: [
    "Καλημέρα! Πώς κοιμήθηκες;",
    "Τι ώρα είναι;",
    "Αύριο θα βρέξει, πάρε ομπρέλα.",
    "Το φαγητό εδώ είναι πολύ νόστιμο.",
    "Πώς πάω στο λιμάνι;",
    "Χρόνια πολλά! Να είσαι πάντα καλά.",
    "Το Σάββατο πάμε εκδρομή στη Θεσσαλονίκη.",
    "Τι θα φάμε απόψε;",
    "Ευχαριστώ πολύ, τα λέμε αύριο!",
    "Κάνει κρύο σήμερα, ντύσου ζεστά.",
  ],
  arabic: [
    "صباح الخير! كيف نمت؟",
    "كم الساعة الآن؟",
    "يقولون إنها ستمطر غدًا، خذ معك مظلة.",
    "الطعام في هذا المطعم لذيذ جدًا.",
    "كيف أصل إلى محطة القطار؟",
    "عيد ميلاد سعيد! كل عام وأنت بخير.",
    "سنسافر إلى دبي في عطلة نهاية الأسبوع.",
    "ماذا سنأكل على العشاء؟",
    "شكرًا جزيلًا، أراك غدًا!",
    "الجو بارد اليوم، البس ملابس دافئة.",
    "سلام! حالت چطوره؟",
    "آج موسم بہت اچھا ہے۔",
  ],
  hebrew: [
    "בוקר טוב! איך ישנת?",
    "מה השעה?",
    "מחר אמור לרדת גשם, קח מטריה.",
    "האוכל כאן ממש טעים.",
    "איך מגיעים לתחנת הרכבת?",
    "יום הולדת שמח! שתהיה לך שנה נהדרת.",
    "בסוף השבוע אנחנו נוסעים לאילת.",
    "מה נאכל לארוחת ערב?",
    "תודה רבה, נתראה מחר!",
    "קר היום, תתלבש חם.",
  ],
  devanagari: [
    "सुप्रभात! नाश्ता कर लिया?",
    "अभी कितने बजे हैं?",
    "कल बारिश होगी, छाता ले जाना।",
    "यहाँ का खाना बहुत स्वादिष्ट है।",
    "रेलवे स्टेशन कैसे जाऊँ?",
    "जन्मदिन मुबारक हो! खुश रहो।",
    "इस हफ्ते हम जयपुर घूमने जा रहे हैं।",
    "रात के खाने में क्या बनाएँ?",
    "बहुत धन्यवाद, कल मिलते हैं!",
    "आज मौसम बहुत अच्छा है, चलो पार्क चलते हैं।",
    "शुभ प्रभात! आज कामावर जाणार आहेस का?",
    "तपाईंलाई कस्तो छ? म ठिक छु।",
  ],
  indic: [
    "আজ খুব গরম, তাই না?",
    "শুভ সকাল! চা খাবে?",
    "வணக்கம்! எப்படி இருக்கீங்க?",
    "இன்று மழை வரும், குடை எடுத்துக்கொள்.",
    "ఈ రోజు వాతావరణం బాగుంది.",
    "ಶುಭೋದಯ! ತಿಂಡಿ ಆಯ್ತಾ?",
    "സുപ്രഭാതം! ചായ കുടിച്ചോ?",
    "કેમ છો? બધું બરાબર છે?",
    "ਸਤ ਸ੍ਰੀ ਅਕਾਲ! ਤੁਹਾਡਾ ਕੀ ਹਾਲ ਹੈ?",
  ],
  thai: [
    "สวัสดีตอนเช้า กินข้าวหรือยัง",
    "ตอนนี้กี่โมงแล้ว",
    "พรุ่งนี้ฝนจะตก อย่าลืมพกร่มนะ",
    "ร้านนี้ก๋วยเตี๋ยวอร่อยมาก",
    "ไปสถานีรถไฟยังไงครับ",
    "สุขสันต์วันเกิดนะ ขอให้มีความสุขมาก ๆ",
    "เสาร์อาทิตย์นี้เราจะไปเที่ยวเชียงใหม่",
    "เย็นนี้กินอะไรดี",
    "ขอบคุณมากค่ะ แล้วเจอกันพรุ่งนี้",
    "วันนี้อากาศร้อนมาก",
  ],
  script: [
    "Բարի լույս։ Ինչպե՞ս ես։",
    "Ժամը քանի՞սն է։",
    "Շնորհակալություն, վաղը կհանդիպենք։",
    "Ի՞նչ ենք ուտելու ընթրիքին։",
    "გამარჯობა! როგორ ხარ?",
    "დღეს ძალიან ცხელა.",
    "მადლობა, ხვალ შევხვდებით!",
    "ሰላም! እንዴት ነህ?",
    "ነገ ዝናብ ይዘንባል።",
    "ምሳ ምን እንብላ?",
  ],
};

/**
 * Short chat replies of our own per writing system, in the register of a conversation with an
 * assistant rather than of a description: agreeing, declining, apologizing, asking back, in
 * the first and second person, casual and polite. Their words are not a narrative's: Hindi's
 * first person (मैं … हूँ) is everywhere in them, and DeepSeek spells its chandrabindu in
 * bytes; Japanese polite endings that o200k merges whole cost Qwen and DeepSeek several
 * tokens. A family's typical ratio and its letter slope have to hold for them too.
 */
const REPLIES: Partial<Record<ContentClass, string[]>> = {
  han: [
    "好的，没问题！还有别的需要帮忙的吗？",
    "抱歉，我不太清楚这个问题的答案。",
    "当然可以，我来给你举个例子。",
    "你说得对，这样做确实更方便。",
    "不客气！祝你考试顺利。",
    "我建议你先休息一下，明天再继续。",
    "这个问题有点复杂，我们一步一步来看。",
    "请稍等，我帮你查一下。",
    "嗯，我明白你的意思了。",
    "哈哈，这个笑话真有意思！",
    "我理解你的担心。其实很多人第一次面试都会紧张，提前多练习几遍会好很多。",
    "可以的！你想要正式一点的语气，还是轻松一点的？",
    "不好意思，我刚才说错了，正确的顺序应该是先洗菜再切菜。",
    "这个办法我也试过，效果还不错，你可以参考一下。",
    "说实话，我觉得两个都挺好的，看你更喜欢哪一种风格。",
    "没关系，慢慢来，有不懂的地方随时问我。",
    "太好了！恭喜你通过了驾照考试。",
    "你是想问价格，还是想问怎么用？",
    "我們下次再聊吧，祝你有個愉快的週末！",
  ],
  kana: [
    "はい、もちろんです。何でも聞いてください。",
    "すみません、その情報は分かりません。",
    "そうですね、私もそう思います。",
    "少々お待ちください。確認いたします。",
    "お疲れさまでした。また明日よろしくお願いします。",
    "どういたしまして！お役に立ててうれしいです。",
    "駅の看板に「出口」と書いてあります。",
    "承知しました。では、来週の月曜日にお送りします。",
    "大丈夫ですよ。気にしないでください。",
    "それはいい考えですね！",
    "ちょっと分かりにくいので、もう一度説明してもらえますか？",
    "申し訳ございませんが、本日の受付は終了いたしました。",
    "なるほど、そういうことでしたか。それなら、まず先生に相談してみるのがいいと思います。",
    "はい、できますよ。どんな雰囲気の文章にしたいか教えてもらえますか？",
    "ごめんね、今ちょっと手が離せないから、あとで電話するね。",
    "うん、いいよ！何時にどこで待ち合わせる？",
    "その気持ち、よく分かります。無理をしすぎないでくださいね。",
    "残念ながら、私にはその判断はできません。専門家に確認することをおすすめします。",
    "まず材料を全部切っておくと、あとの作業がずっと楽になります。",
    "えっ、本当に？それはびっくりだね。",
    "もしよければ、もう少し詳しく教えていただけますか？",
    "了解です。では、この内容で進めますね。",
  ],
  hangul: [
    "네, 물론이죠! 무엇을 도와드릴까요?",
    "죄송하지만 그 부분은 잘 모르겠어요.",
    "좋은 질문이에요. 하나씩 설명해 드릴게요.",
    "천만에요! 도움이 되어서 기뻐요.",
    "잠시만 기다려 주세요. 확인해 볼게요.",
    "맞아요, 저도 그렇게 생각해요.",
    "그 마음 충분히 이해해요. 처음에는 누구나 실수하니까 너무 걱정하지 마세요.",
    "응, 좋아! 몇 시에 어디서 만날까?",
    "미안, 지금은 좀 바빠서 이따가 다시 연락할게.",
    "그럼 먼저 재료를 준비하고, 물이 끓으면 면을 넣으세요.",
    "혹시 조금 더 자세히 말씀해 주실 수 있나요?",
  ],
  cyrillic: [
    "Конечно! Чем могу помочь?",
    "Извините, я этого не знаю.",
    "Хороший вопрос. Давайте разберём по шагам.",
    "Не за что! Обращайтесь, если что-то понадобится.",
    "Да, вы правы, так будет проще.",
    "Подождите минутку, я проверю.",
    "Понимаю вас. В первые недели на новой работе всем бывает непросто.",
    "Да, могу. Скажите только, кому адресовано письмо.",
    "Ой, извини, я сейчас занят, перезвоню позже.",
    "Честно говоря, мне оба варианта нравятся, выбирайте по вкусу.",
    "Уточните, пожалуйста: вам нужна цена или инструкция?",
  ],
  arabic: [
    "أفهم قصدك تمامًا. في البداية يكون الأمر صعبًا على الجميع.",
    "نعم، أستطيع ذلك. فقط أخبرني لمن ستكتب الرسالة.",
    "آسف، لا أعرف الإجابة الدقيقة، لكن يمكنني أن أقترح عليك بعض المصادر.",
    "تمام، سأرسل لك التفاصيل بعد قليل.",
  ],
  devanagari: [
    "ज़रूर! बताइए, आपको किस चीज़ में मदद चाहिए?",
    "माफ़ कीजिए, मुझे यह जानकारी नहीं है।",
    "हाँ, यह बिल्कुल सही है।",
    "आपका सवाल अच्छा है, पर इसका जवाब थोड़ा लंबा है।",
    "क्या आप थोड़ा और समझा सकते हैं कि आप क्या करना चाहते हैं?",
    "मुझे लगता है कि आपको पहले डॉक्टर से बात करनी चाहिए।",
    "ठीक है, मैं इसे छोटे वाक्यों में लिख देता हूँ।",
    "शुक्रिया! आपसे बात करके अच्छा लगा।",
    "मैं समझ गया। चलिए इसे एक एक करके देखते हैं।",
    "नहीं, आज दफ़्तर बंद है। कल सुबह खुलेगा।",
    "मेरा नाम रीना है, और आपका?",
    "बहुत बढ़िया! ऐसे ही मेहनत करते रहिए।",
    "आप चाहें तो मैं इसका अंग्रेज़ी में अनुवाद भी कर सकती हूँ।",
    "इसमें चिंता की कोई बात नहीं है, ऐसा अक्सर होता है।",
    "मैं आपकी बात समझ सकता हूँ। नई नौकरी में शुरू के कुछ हफ़्ते सबके लिए मुश्किल होते हैं।",
    "हाँ, मैं यह कर सकती हूँ। बस मुझे बताइए कि चिट्ठी किसके नाम लिखनी है।",
    "मैं पक्के तौर पर नहीं कह सकता, लेकिन मेरे हिसाब से दूसरा विकल्प बेहतर है।",
    "अगर आप रोज़ थोड़ा थोड़ा अभ्यास करेंगे, तो कुछ ही महीनों में फ़र्क़ दिखने लगेगा।",
    "आपने बिल्कुल ठीक पूछा। पहले आटा गूँथ लीजिए, फिर उसे आधे घंटे के लिए ढककर रख दीजिए।",
    "मुझे खेद है कि आपको परेशानी हुई। क्या आप बता सकते हैं कि गड़बड़ी कब से हो रही है?",
    "जी हाँ, ट्रेन का टिकट ऑनलाइन भी बुक हो जाता है।",
    "मैं अभी यहीं हूँ, आराम से सोचकर जवाब दीजिए।",
    "सच कहूँ तो मुझे यह कहानी बहुत पसंद आई।",
    "क्या तुम कल शाम को फ़ोन कर सकते हो? मैं तब तक घर पहुँच जाऊँगी।",
  ],
};

/** Short code of our own in the languages people paste besides TypeScript (no digits). */
const SNIPPETS: Record<string, string> = {
  go: `package main

import (
	"encoding/json"
	"log"
	"net/http"
)

type greeting struct {
	Name    string \`json:"name"\`
	Message string \`json:"message"\`
}

func hello(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("name")
	if name == "" {
		http.Error(w, "missing name", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(greeting{Name: name, Message: "hello " + name}); err != nil {
		log.Printf("encode: %v", err)
	}
}`,
  python: `from collections import Counter
from pathlib import Path


def top_words(path: Path, limit: int) -> list[tuple[str, int]]:
    """Count the words of a text file, most frequent first."""
    counts: Counter[str] = Counter()
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            counts.update(word.lower().strip(".,;:!?") for word in line.split())
    return counts.most_common(limit)


if __name__ == "__main__":
    for word, count in top_words(Path("notes.txt"), limit=TOP_WORDS):
        print(f"{word}\\t{count}")`,
  rust: `use std::collections::HashMap;

pub fn group_by_len(words: &[&str]) -> HashMap<usize, Vec<String>> {
    let mut groups: HashMap<usize, Vec<String>> = HashMap::new();
    for word in words {
        groups.entry(word.chars().count()).or_default().push(word.to_string());
    }
    for list in groups.values_mut() {
        list.sort();
        list.dedup();
    }
    groups
}`,
  c: `#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *read_line(FILE *in) {
	size_t cap = BUFSIZ, len = 0;
	char *buf = malloc(cap);
	int ch;
	if (!buf) return NULL;
	while ((ch = fgetc(in)) != EOF && ch != '\\n') {
		if (len + 1 >= cap) {
			char *next = realloc(buf, cap *= 2);
			if (!next) { free(buf); return NULL; }
			buf = next;
		}
		buf[len++] = (char)ch;
	}
	buf[len] = '\\0';
	return buf;
}`,
  sh: `#!/usr/bin/env bash
set -euo pipefail
src="\${HOME}/photos"
dest="/mnt/backup/photos-$(date +%F)"
mkdir -p "$dest"
rsync -a --delete --exclude '*.tmp' "$src/" "$dest/"
find /mnt/backup -maxdepth 1 -name 'photos-*' -mtime "+\${KEEP_DAYS:?}" -exec rm -rf {} +
echo "backed up to $dest"`,
};

/** Probe texts by the class Fold gives them (our own sentences; the repository's own files). */
export const PROBES: Partial<Record<ContentClass, { hint: "text" | "tool"; texts: string[] }>> = {
  prose: { hint: "text", texts: [noDigits(file("README.md"))] },
  code: {
    hint: "text",
    texts: [
      ...["lib/context/tokens.ts", "lib/context/calibration.ts", "lib/context/budget.ts"].map(
        (f) => `\`\`\`ts\n${noDigits(file(f))}\n\`\`\``,
      ),
      // Other languages than the repository's TypeScript: snippets of our own.
      ...Object.entries(SNIPPETS).map(([lang, code]) => `\`\`\`${lang}\n${code}\n\`\`\``),
    ],
  },
  json: {
    hint: "tool",
    texts: [noDigits(JSON.stringify(JSON.parse(file("package.json")), null, 1))],
  },
  han: {
    hint: "text",
    texts: [
      "我们在河边找了一家安静的小饭馆，点了几道家常菜，一边吃一边聊起了小时候的事情。后来雨越下越大，大家只好在店里多坐了一会儿。",
      "你好！明天上海会下雨吗？",
      "新的日志系统上线以后，排查问题的时间明显缩短了，但是磁盘占用也涨了不少，需要定期清理旧文件。",
    ],
  },
  kana: {
    hint: "text",
    texts: [
      "引っ越しの準備がなかなか終わらず、週末はずっと段ボールに本を詰めていました。新しい部屋は駅から近くて便利です。",
      "今日はとても暑いですね。",
      "テストが失敗する原因を調べたら、タイムゾーンの設定が環境ごとに違っていたことが分かりました。",
    ],
  },
  hangul: {
    hint: "text",
    texts: [
      "오늘 아침에는 버스가 늦게 와서 회의에 조금 늦었지만, 다행히 중요한 안건은 아직 시작하지 않았습니다.",
      "안녕하세요! 오늘 날씨 어때요?",
      "새 버전을 설치한 뒤로 앱이 자주 멈춰서 이전 버전으로 되돌렸어요.",
    ],
  },
  cyrillic: {
    hint: "text",
    texts: [
      "Вчера мы весь вечер чинили старый велосипед: поменяли цепь, подкачали колёса и наконец поехали кататься по набережной.",
      "Если сервер отвечает медленно, сначала посмотрите на журнал запросов и проверьте, не закончилось ли место на диске.",
      "Учора ми цілий вечір лагодили старий велосипед, а потім поїхали кататися вздовж річки.",
    ],
  },
  greek: {
    hint: "text",
    texts: [
      "Το πρωί πήγαμε στην αγορά και αγοράσαμε φρέσκα φρούτα, ψωμί και λίγο τυρί για το ταξίδι.",
      "Αν η εφαρμογή κλείνει συνέχεια, δοκιμάστε πρώτα να την ενημερώσετε στη νέα έκδοση.",
    ],
  },
  arabic: {
    hint: "text",
    texts: [
      "ذهبنا في نهاية الأسبوع إلى السوق القديم واشترينا بعض التوابل والقهوة، ثم جلسنا في مقهى صغير نتحدث عن خطط الصيف.",
      "إذا كان الخادم بطيئًا، فابدأ بمراجعة سجل الطلبات وتأكد من وجود مساحة كافية على القرص.",
      "آخر هفته به بازار قدیمی رفتیم و کمی ادویه و قهوه خریدیم و بعد در یک کافه کوچک نشستیم.",
    ],
  },
  hebrew: {
    hint: "text",
    texts: [
      "אתמול בערב ישבנו במרפסת, שתינו תה ודיברנו על הטיול שתכננו לחורף הבא.",
      "אם האפליקציה נסגרת כל הזמן, נסו קודם לעדכן אותה לגרסה החדשה.",
    ],
  },
  devanagari: {
    hint: "text",
    texts: [
      "कल शाम हम सब दोस्त नदी के किनारे घूमने गए और देर रात तक पुरानी बातें करते रहे।",
      "अगर ऐप बार बार बंद हो जाता है तो पहले नया संस्करण डाउनलोड करके देखिए।",
      "गाँव के मेले में इस बार झूले, चाट के ठेले और कठपुतली का खेल था, इसलिए बच्चे पूरे दिन वहीं रहे।",
      "सर्वर धीमा हो तो पहले अनुरोधों का लॉग देखिए और जाँचिए कि डिस्क पर जगह बची है या नहीं।",
      "काल संध्याकाळी आम्ही नदीकाठी फिरायला गेलो आणि उशिरापर्यंत गप्पा मारल्या.",
    ],
  },
  indic: {
    hint: "text",
    texts: [
      "আমরা সকালে বাজারে গিয়ে তাজা সবজি আর মাছ কিনে এনেছিলাম।",
      "நேற்று மாலை நாங்கள் ஆற்றங்கரையில் நடந்து சென்று பழைய கதைகளைப் பேசினோம்.",
      "నిన్న సాయంత్రం మేము నది ఒడ్డున నడుస్తూ పాత విషయాలు మాట్లాడుకున్నాం.",
      "ನಿನ್ನೆ ಸಂಜೆ ನಾವು ನದಿಯ ದಡದಲ್ಲಿ ನಡೆಯುತ್ತಾ ಹಳೆಯ ಕಥೆಗಳನ್ನು ಮಾತನಾಡಿದೆವು.",
      "ഇന്നലെ വൈകുന്നേരം ഞങ്ങൾ പുഴയുടെ തീരത്ത് നടന്ന് പഴയ കഥകൾ പറഞ്ഞു.",
    ],
  },
  thai: {
    hint: "text",
    texts: [
      "เมื่อวานฝนตกหนักมาก เราเลยอยู่บ้านดูหนังและทำอาหารกินกันเอง",
      "ถ้าแอปปิดเองบ่อย ๆ ให้ลองอัปเดตเป็นเวอร์ชันใหม่ก่อน",
    ],
  },
  emoji: {
    hint: "text",
    texts: ["🎉🎂🎈 🥳👏 🌧️☔🌈 👩‍💻👨‍🍳 🇫🇷🇯🇵🇧🇷 👍🏽👋🏿", "🍕🍔🌮🍣 ⚽🏀🎾 🚗🚲✈️ ❤️💔✨"],
  },
  script: {
    hint: "text",
    texts: [
      "Երեկ երեկոյան մենք զբոսնեցինք գետի ափով և խոսեցինք հին օրերի մասին։",
      "გუშინ საღამოს მდინარის ნაპირზე ვისეირნეთ და ძველ დღეებზე ვისაუბრეთ.",
      "ትናንት ምሽት በወንዙ ዳር ተጓዝን እና ስለ ድሮ ጊዜ ተነጋገርን።",
    ],
  },
};

for (const set of [EVERYDAY, REPLIES]) {
  for (const [cls, texts] of Object.entries(set) as [ContentClass, string[]][]) {
    PROBES[cls]?.texts.push(...texts);
  }
}

/**
 * Number texts of our own (a log, a table, CSV rows): each family's price of o200k's digit
 * groups is measured on the groups these cut into, one group at a time.
 */
const NUMBER_TEXTS = [
  "2025-03-14 08:12:55 431 ms 200 17 2048\n2025-03-14 08:12:57 388 ms 200 18 1976",
  "| 3.1416 | 2.7183 | 1.4142 | 0.5772 |\n| 6.0221 | 1.6022 | 9.1094 | 8.3145 |",
  "1741939200,48213907,6650312,99.2\n1741942800,48302211,6649875,98.7",
  "104,3,19.99\n105,12,4.50\n106,1,249.00\n107,7,0.35",
];

/** o200k's digit groups of the number texts, by the class that holds them. */
export function digitGroupProbes(): Record<DigitGroupClass, string[]> {
  const probes: Record<DigitGroupClass, string[]> = { digits1: [], digits2: [], digits3: [] };
  for (const text of NUMBER_TEXTS) {
    for (const [run] of text.matchAll(/[0-9]+/g)) {
      for (let at = 0; at < run.length; at += 3) {
        const group = run.slice(at, at + 3);
        probes[DIGIT_GROUP_CLASSES[group.length - 1] as DigitGroupClass].push(group);
      }
    }
  }
  return probes;
}
