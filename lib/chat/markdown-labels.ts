import type { Nodes } from "mdast";
import { fromMarkdown } from "mdast-util-from-markdown";
import { gfmFromMarkdown } from "mdast-util-gfm";
import { gfm } from "micromark-extension-gfm";

/** GFM's syntax (footnotes), made once rather than per reply. */
const WITH_GFM = { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] };

/**
 * A reply's link reference definitions (`[1]: https://…`) and footnotes (`[^1]: …`) made its
 * own within a document of many replies. CommonMark takes the first definition of a label
 * anywhere in the document, so in an export the second reply's `[1]` would link to the first
 * reply's address and its `[^1]` show the first reply's note. Each label the text defines or
 * refers to gets `prefix` in front, written where it stands: the rest of the text is unchanged.
 */
export function ownLabels(text: string, prefix: string): string {
  if (!text.includes("[")) return text;
  const tree = fromMarkdown(text, WITH_GFM);
  const edits: Array<{ at: number; end: number; put: string }> = [];
  const walk = (node: Nodes) => {
    const start = node.position?.start.offset;
    const end = node.position?.end.offset;
    if (start !== undefined && end !== undefined) {
      const source = text.slice(start, end);
      switch (node.type) {
        case "definition":
        case "footnoteDefinition":
        case "footnoteReference": {
          // `[label]: …`, `[^label]: …`, `[^label]`: the label opens the node.
          const open = node.type === "definition" ? 1 : 2;
          edits.push({ at: start + open, end: start + open, put: prefix });
          break;
        }
        case "linkReference":
        case "imageReference":
          if (node.referenceType === "full") {
            // `[text][label]`: the label is the last bracket pair (a label holds no bracket).
            const at = start + source.lastIndexOf("[") + 1;
            edits.push({ at, end: at, put: prefix });
          } else {
            // `[text][]` or `[text]` (`![alt]…` for an image): the text is the label, named
            // after it.
            const collapsed = node.referenceType === "collapsed";
            const label = source.slice(
              source.indexOf("[") + 1,
              source.length - (collapsed ? 3 : 1),
            );
            edits.push({ at: collapsed ? end - 2 : end, end, put: `[${prefix}${label}]` });
          }
          break;
      }
    }
    if ("children" in node) for (const child of node.children) walk(child);
  };
  walk(tree);
  let out = text;
  for (const edit of edits.sort((a, b) => b.at - a.at)) {
    out = out.slice(0, edit.at) + edit.put + out.slice(edit.end);
  }
  return out;
}
