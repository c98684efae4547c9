import { tool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  estimateOverhead,
  REQUEST_OVERHEAD_TOKENS,
  SYSTEM_OVERHEAD_TOKENS,
} from "@/lib/context/overhead";
import { createEstimator } from "@/lib/context/tokens";

const schema = z.object({ query: z.string().describe("what to look up") });

describe("the instructions-and-tools overhead", () => {
  it("is the same for tools rebuilt per request, and follows a changed description or schema", async () => {
    const estimator = createEstimator();
    const count = (description: string, inputSchema: z.ZodType = schema) =>
      estimateOverhead(estimator, "Be brief.", { lookup: tool({ description, inputSchema }) });

    const first = await count("Looks a word up.");
    expect(await count("Looks a word up.")).toEqual(first);

    const longer = await count("Looks a word up in the dictionary and returns every sense of it.");
    expect(longer.toolOverheadTokens).toBeGreaterThan(first.toolOverheadTokens);

    const wider = z.object({ query: z.string(), language: z.string(), limit: z.number() });
    expect((await count("Looks a word up.", wider)).toolOverheadTokens).toBeGreaterThan(
      first.toolOverheadTokens,
    );
  });

  it("counts the request's own framing once, and the instructions by their content class", async () => {
    const estimator = createEstimator();
    const empty = await estimateOverhead(estimator, "", {});
    expect(empty.overheadTokens).toBe(REQUEST_OVERHEAD_TOKENS);
    expect(empty.overheadClasses.requestFrame).toBe(REQUEST_OVERHEAD_TOKENS);
    expect(empty.overheadClasses.systemFrame).toBe(0);
    expect(empty.overheadClasses.frame).toBe(0);

    const chinese = "请用简体中文回答，并且尽量简短，不要重复用户的问题。";
    const overhead = await estimateOverhead(estimator, chinese, {});
    expect(overhead.overheadClasses.han).toBe(estimator.countText(chinese));
    expect(overhead.overheadClasses.prose).toBe(0);
    expect(overhead.overheadClasses.requestFrame).toBe(REQUEST_OVERHEAD_TOKENS);
    expect(overhead.overheadClasses.systemFrame).toBe(SYSTEM_OVERHEAD_TOKENS);
    expect(overhead.overheadTokens).toBe(
      overhead.overheadClasses.han + REQUEST_OVERHEAD_TOKENS + SYSTEM_OVERHEAD_TOKENS,
    );
  });
});
