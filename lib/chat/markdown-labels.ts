import type { Nodes, Root } from "mdast";
import type { TextEdit } from "./markdown-edits";

/**
 * A reply's link reference definitions (`[1]: https://…`) and footnotes (`[^1]: …`) made its
 * own within a document of many replies. CommonMark takes the first definition of a label
 * anywhere in the document, so in an export the second reply's `[1]` would link to the first
 * reply's address and its `[^1]` show the first reply's note. Each label the text defines or
 * refers to gets `prefix` in front, written where it stands: the rest of the text is unchanged.
 * The edits to the text that do it, found in its tree (`tree` is `text` parsed).
 */
export function labelEdits(tree: Root, text: string, prefix: string): TextEdit[] {
  const edits: TextEdit[] = [];
  const walk = (node: Nodes) => {
    const start = node.position?.start.offset;
    const end = node.position?.end.offset;
    if (start !== undefined && end !== undefined) {
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
        case "imageReference": {
          const source = text.slice(start, end);
          if (node.referenceType === "full") {
            // `[text][label]`: the label is the last bracket pair (a label holds no bracket).
            const at = start + source.lastIndexOf("[") + 1;
            edits.push({ at, end: at, put: prefix });
          } else {
            // `[text][]` or `[text]` (`![alt]…` for an image): the text is the label, named
            // after it, on one line (a label matches whatever white space it is written with):
            // a line break it held would end a heading it stands in, and its quote or list
            // marks are not the label's.
            const collapsed = node.referenceType === "collapsed";
            const label = source
              .slice(source.indexOf("[") + 1, source.length - (collapsed ? 3 : 1))
              .replace(/\n[ \t>]*/g, " ");
            edits.push({ at: collapsed ? end - 2 : end, end, put: `[${prefix}${label}]` });
          }
          break;
        }
      }
    }
    if ("children" in node) for (const child of node.children) walk(child);
  };
  walk(tree);
  return edits;
}
