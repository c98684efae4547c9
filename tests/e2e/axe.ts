import AxeBuilder from "@axe-core/playwright";
import { expect, type Page } from "@playwright/test";

/**
 * Runs axe-core on the page as it is and fails with every violation listed (rule, impact,
 * the elements), so a regression says what broke. All rules, best practices included.
 */
export async function expectNoAxeViolations(page: Page, where: string): Promise<void> {
  const { violations } = await new AxeBuilder({ page }).analyze();
  const report = violations.map(
    (v) =>
      `${v.id} (${v.impact}): ${v.help}\n${v.nodes
        .map((n) => `    ${n.target.join(" ")}  ${n.failureSummary?.split("\n").join(" ") ?? ""}`)
        .join("\n")}`,
  );
  expect(report, `axe-core violations on ${where}`).toEqual([]);
}
