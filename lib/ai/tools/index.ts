import type { ToolSet } from "ai";
import { type CurrentTimeOptions, createCurrentTimeTool } from "./current-time";
import { createFetchUrlTool, type FetchUrlOptions } from "./fetch-url";
import { createRecallTool, type RecallPort } from "./recall";

/**
 * Fold's built-in tools, keyed by the names the model sees. Build a fresh set
 * per request; options exist for tests (fixed clock, injected DNS/fetch).
 */

export type BuiltinToolsOptions = {
  fetchUrl?: FetchUrlOptions;
  currentTime?: CurrentTimeOptions;
  /** The chat a turn's `recall` reads; without it the tool is offered but answers with an error. */
  recall?: RecallPort;
};

export function builtinTools(options: BuiltinToolsOptions = {}) {
  return {
    fetch_url: createFetchUrlTool(options.fetchUrl),
    current_time: createCurrentTimeTool(options.currentTime),
    recall: createRecallTool(options.recall),
  } satisfies ToolSet;
}

export type BuiltinTools = ReturnType<typeof builtinTools>;
export type BuiltinToolName = keyof BuiltinTools;

export { type CurrentTimeOptions, type CurrentTimeResult, currentTime } from "./current-time";
export {
  FetchUrlError,
  type FetchUrlOptions,
  type FetchUrlResult,
  fetchUrl,
} from "./fetch-url";
export type { RecallPort };
