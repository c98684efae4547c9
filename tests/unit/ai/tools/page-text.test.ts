import { describe, expect, it } from "vitest";
import { MAX_PAGE_ELEMENTS, MAX_TITLE_CHARS, pageText } from "@/lib/ai/tools/page-text";

const page = `<!doctype html>
<html>
<head>
  <title>Tea &amp; Biscuits</title>
  <style>body { color: red } .x::before { content: "</p>" }</style>
  <script>if (a < b) document.write("<h1>Injected</h1>");</script>
</head>
<body>
  <nav><ul><li><a href="/">Home</a></li><li><a href="/shop">Shop</a></li></ul></nav>
  <h1>Brewing   guide</h1>
  <p>Use <b>fresh</b> water&nbsp;at 95&deg;C.
     See <a href="/tips">our tips</a>.</p>
  <h2>Kinds</h2>
  <ul>
    <li>Green</li>
    <li>Black<ul><li>Assam</li></ul></li>
  </ul>
  <ol start="3"><li>Boil</li><li>Pour</li></ol>
  <noscript>Enable JavaScript</noscript>
  <footer>Copyright 2024</footer>
</body>
</html>`;

describe("pageText", () => {
  it("keeps the title, headings, paragraphs, list items and links", () => {
    const { title, text } = pageText(page, { baseUrl: "https://tea.test/guide" });
    expect(title).toBe("Tea & Biscuits");
    expect(text).toBe(
      [
        // Readability keeps one h1 for the page title, so headings in the article start at ##.
        "## Brewing guide",
        "",
        "Use fresh water at 95°C. See our tips (https://tea.test/tips).",
        "",
        "## Kinds",
        "",
        "- Green",
        "- Black",
        "  - Assam",
        "",
        "3. Boil",
        "4. Pour",
      ].join("\n"),
    );
  });

  it("drops scripts, styles, navigation, footers and hidden elements", () => {
    const { text } = pageText(`${page}<div hidden>secret</div><p aria-hidden="true">icon</p>`);
    for (const dropped of ["Injected", "color", "Home", "Shop", "Copyright", "JavaScript"])
      expect(text).not.toContain(dropped);
    expect(text).not.toContain("secret");
    expect(text).not.toContain("icon");
  });

  it("prefers the single <main> element over the page around it", () => {
    const { text } = pageText(
      "<header><p>Site banner</p></header><main><p>The article.</p></main><div>Related links</div>",
    );
    expect(text).toBe("The article.");
  });

  it("picks the article out of a page full of other blocks", () => {
    const filler = (label: string) =>
      `<div class="sidebar-widget"><a href="/x">${label} one</a> <a href="/y">${label} two</a></div>`;
    const story = Array.from(
      { length: 6 },
      (_, i) =>
        `<p>Paragraph ${i + 1} of the story, long enough to read as prose, with commas, clauses, and a point to make about tea.</p>`,
    ).join("");
    const { text } = pageText(
      `<html><body>${filler("Sponsored")}<div class="comments">${filler("Comment")}</div><article><h1>Story</h1>${story}</article>${filler("Popular")}</body></html>`,
    );
    expect(text).toContain("Paragraph 1 of the story");
    expect(text).toContain("Paragraph 6 of the story");
    for (const boilerplate of ["Sponsored", "Comment one", "Popular"])
      expect(text).not.toContain(boilerplate);
  });

  it("preserves preformatted text and separates table cells", () => {
    const { text } = pageText(
      "<pre>\nif (x) {\n  run();\n}</pre><table><tr><th>Name</th><th>Age</th></tr><tr><td>Ada</td><td>36</td></tr></table>",
    );
    expect(text).toBe("if (x) {\n  run();\n}\n\nName | Age\nAda | 36");
  });

  it("decodes named and numeric entities and keeps stray < as text", () => {
    const { text } = pageText(
      "<p>a &lt; b &amp;&amp; c > d &#8212; &#x1F600; &copy 2024 &bogus; 1 < 2</p>",
    );
    expect(text).toBe("a < b && c > d — 😀 © 2024 &bogus; 1 < 2");
  });

  it("turns <br> into line breaks and skips links that repeat their URL or point in-page", () => {
    const { text } = pageText(
      '<p>one<br>two<br><br>three <a href="https://x.test/">https://x.test/</a> <a href="#top">top</a></p>',
      { baseUrl: "https://x.test/page" },
    );
    expect(text).toBe("one\ntwo\n\nthree https://x.test/ top");
  });

  it("does not treat a > inside a quoted attribute as the end of the tag", () => {
    const { text } = pageText('<p title="a > b">visible</p><img alt="x>y" src="i.png">after');
    expect(text).toBe("visible\n\nafter");
  });

  it("returns no title when the page has none, and survives unterminated markup", () => {
    expect(pageText("<p>plain").title).toBeUndefined();
    expect(pageText("<p>text</p><script>never closed").text).toBe("text");
    expect(pageText("<p>text</p><a href='x").text).toBe("text");
  });
  it("numbers every item of a very long ordered list in one pass", () => {
    // As many as a page may hold (MAX_PAGE_ELEMENTS), <main> and <ol> with them.
    const count = MAX_PAGE_ELEMENTS - 2;
    const items = Array.from({ length: count }, (_, i) => `<li>step ${i + 1}</li>`).join("");
    const lines = pageText(`<main><ol>${items}</ol></main>`).text.split("\n");
    expect(lines).toHaveLength(count);
    expect(lines[0]).toBe("1. step 1");
    expect(lines.at(-1)).toBe(`${count}. step ${count}`);
  });

  it("reads text nested thousands of elements deep instead of overflowing the stack", () => {
    const depth = MAX_PAGE_ELEMENTS - 10;
    const html = `<main><p>top</p>${"<span>".repeat(depth)}deep text${"</span>".repeat(depth)}</main>`;
    expect(pageText(html).text).toBe("top\n\ndeep text");
  });

  it("keeps a title to one line's length", () => {
    const { title } = pageText(`<title>${"Long title ".repeat(50_000)}</title><p>body</p>`);
    expect(title?.length).toBe(MAX_TITLE_CHARS);
    expect(title?.startsWith("Long title Long title")).toBe(true);
  });

  it("reads a page without an <html> tag whose script mentions one", () => {
    const html = '<head><script>s = "<html>";</script></head><body><p>The visible text.</p></body>';
    expect(pageText(html).text).toBe("The visible text.");
  });
  it("reads thousands of nested tags outside <main> too (Readability is not asked)", () => {
    const depth = MAX_PAGE_ELEMENTS - 10;
    const html = `<p>top</p>${"<div>".repeat(depth)}deep text${"</div>".repeat(depth)}`;
    expect(pageText(html).text).toBe("top\n\ndeep text");
  });

  it("reads a page without a <body> tag from the whole document", () => {
    expect(pageText("<html><title>Bare</title><p>hello world</p></html>")).toEqual({
      title: "Bare",
      text: "hello world",
    });
    const headed =
      "<!doctype html><html><head><title>T</title><script>track()</script></head>" +
      "<h1>Heading</h1><p>First.</p><p>Second.</p></html>";
    expect(pageText(headed).text).toBe("# Heading\n\nFirst.\n\nSecond.");
  });

  it("reads thousands of nested tags in a page without a <body> (Readability is not asked)", () => {
    const depth = MAX_PAGE_ELEMENTS - 10;
    const html = `<html><p>top</p>${"<div>".repeat(depth)}deep text${"</div>".repeat(depth)}</html>`;
    expect(pageText(html).text).toBe("top\n\ndeep text");
  });

  it("tells a page that opens with <html> after comments, in one pass over many comments", () => {
    const opened = `<!-- a --><!doctype html><!-- b -->\n<html><body><p>inside</p></body></html>`;
    expect(pageText(opened).text).toBe("inside");
    // Comments that never reach an <html>: read as a fragment, and at once (no backtracking).
    expect(pageText(`${"<!---->".repeat(40)}<p>after comments</p>`).text).toBe("after comments");
  });
});

describe("a page of very many elements", () => {
  it("is read up to MAX_PAGE_ELEMENTS elements and says so; a page under it is read whole", () => {
    const paragraphs = (n: number) =>
      Array.from({ length: n }, (_, i) => `<p>para-${i}</p>`).join("");
    const huge = pageText(
      `<html><head><title>Big</title></head><body>${paragraphs(100_000)}</body></html>`,
    );
    expect(huge.title).toBe("Big");
    expect(huge.cutAtElements).toBe(MAX_PAGE_ELEMENTS);
    expect(huge.text.startsWith("para-0\n")).toBe(true);
    // The html, head, title and body elements come first: four fewer paragraphs fit.
    expect(huge.text.split("\n").filter(Boolean).at(-1)).toBe(`para-${MAX_PAGE_ELEMENTS - 5}`);
    expect(huge.text).not.toContain("para-99999");

    const whole = pageText(`<html><body>${paragraphs(1_000)}</body></html>`);
    expect(whole.cutAtElements).toBeUndefined();
    expect(whole.text).toContain("para-999");
  });

  it("counts attributes and character references too: a page of few elements full of them is cut", () => {
    // 2 MB of references in one paragraph: read up to the budget's worth of them.
    const references = pageText(`<html><body><p>${"&amp;".repeat(400_000)}</p></body></html>`);
    expect(references.cutAtElements).toBe(3);
    expect(references.text).toMatch(/^&+$/);
    expect(references.text.length).toBeGreaterThan(MAX_PAGE_ELEMENTS);
    expect(references.text.length).toBeLessThanOrEqual(2 * MAX_PAGE_ELEMENTS);
    // A tag of 100,000 attributes: the page is read up to it.
    const attributes = Array.from({ length: 100_000 }, (_, i) => `a${i}="1"`).join(" ");
    const wide = pageText(`<p>before</p><p ${attributes}>inside</p>`);
    expect(wide.cutAtElements).toBe(1);
    expect(wide.text).toBe("before");
    // Attributes without values, or values unquoted, count as well.
    const bare = pageText(`<p>before</p><p ${"x ".repeat(30_000)}>inside</p>`);
    expect(bare.text).toBe("before");
    const unquoted = pageText(`<p>before</p><p ${"x=1 ".repeat(30_000)}>inside</p>`);
    expect(unquoted.text).toBe("before");
  });

  it("counts end tags, which make elements of their own when nothing is open: a page of them is cut", () => {
    const stray = pageText(`<p>before</p>${"a</p>".repeat(100_000)}`);
    expect(stray.cutAtElements).toBeDefined();
    expect(stray.text.startsWith("before")).toBe(true);
    expect(stray.text.replace(/[^a]/g, "").length).toBeLessThanOrEqual(MAX_PAGE_ELEMENTS);
  });

  it("counts attributes that follow a slash or a closing quote, as the parser reads them", () => {
    const slashed = pageText(`<p>before</p><p${"/a".repeat(100_000)}>inside</p>`);
    expect(slashed.text).toBe("before");
    const packed = pageText(`<p>before</p><p ${'a=""'.repeat(100_000)}>inside</p>`);
    expect(packed.text).toBe("before");
    // A slash inside an unquoted value is the value's, not an attribute: nothing is cut.
    const link = pageText(`<p>before</p><a href=${"/x".repeat(30_000)}>link</a><p>after</p>`);
    expect(link.cutAtElements).toBeUndefined();
    expect(link.text).toContain("after");
  });

  it("is not fooled by a quote that opens no value: the elements after it still count", () => {
    const paragraphs = Array.from({ length: 30_000 }, (_, i) => `<p>p${i}</p>`).join("");
    const page = pageText(`<p a'b>quoted</p>${paragraphs}`);
    // The first paragraph's attribute (named a'b) takes one element's place.
    expect(page.cutAtElements).toBe(MAX_PAGE_ELEMENTS - 1);
    // A value's quotes hide a `>` and a `<` from the count, as they do from the parser.
    const valued = pageText(`<p title="a > <b> c" data-x='<i>'>text</p><p>after</p>`);
    expect(valued).toEqual({ text: "text\n\nafter" });
  });

  it("reads a page whose markup is just under the budget whole", () => {
    // Each paragraph: one element and one attribute.
    const count = MAX_PAGE_ELEMENTS / 2 - 10;
    const items = Array.from({ length: count }, (_, i) => `<p class="c">item-${i}</p>`).join("");
    const page = pageText(`<main>${items}</main>`);
    expect(page.cutAtElements).toBeUndefined();
    expect(page.text).toContain(`item-${count - 1}`);
  });
});
