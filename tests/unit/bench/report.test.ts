import { describe, expect, it } from "vitest";
import { formatTable, unitOf } from "../../bench/report";

/**
 * Every figure name `npm run bench` reports (tests/bench), by the unit its table row must
 * show. Names built at run time stand here for one of their values (a size, a tokenizer
 * family, an identifier origin).
 */
const FIGURES_BY_UNIT: Record<string, readonly string[]> = {
  ms: [
    "chat.ttft_direct_p50_ms",
    "chat.ttft_fold_p50_ms",
    "chat.ttft_overhead_p50_ms",
    "chat.ttft_overhead_p95_ms",
    "chat.http_ttft_overhead_p50_ms",
    "chat.http_ttft_overhead_p95_ms",
    "chat.http_ttft_fold_p50_ms",
    "chat.http_single_ttft_overhead_p50_ms",
    "chat.http_single_ttft_overhead_p95_ms",
    "chat.http_single_ttft_fold_p50_ms",
    "chat.http_single_ttft_direct_p50_ms",
    "chat.http_single_headers_p50_ms",
    "chat.http_paused_ttft_overhead_p50_ms",
    "chat.http_paused_ttft_fold_p50_ms",
    "chat.cpu_ms_per_turn",
    "compaction.next_turn_ttft_p50_ms",
    "compaction.next_turn_ttft_p95_ms",
    "compaction.ordinary_ttft_p50_ms",
    "lifecycle.resume_first_chunk_ms_p50",
    "lifecycle.resume_first_chunk_ms_p95",
    "lifecycle.stop_to_provider_abort_ms_p50",
    "lifecycle.stop_to_provider_abort_ms_p95",
    "projection.model_switch_ms_10000",
    "tier1.compact_cpu_ms_1000",
    "tier1.cpu_ms_100",
    "tier2.cpu_ms_per_step",
    "tier2.trimming_step_cpu_ms",
    "tier2.under_trigger_cpu_ms",
    "turn.cpu_ms_1000",
    "turn.wall_ms_10000",
    "ui.open_10k_ms",
  ],
  s: ["lifecycle.crash_unlock_s", "recovery.seconds", "sim.seconds", "sim_skew.seconds"],
  "%": [
    "estimator.qwen3_cold_mean_err_pct",
    "estimator.deepseek_v3_cold_max_under_pct",
    "estimator.llama3_calibrated_mean_err_pct",
    "estimator.qwen3_calibrated_max_err_pct",
    "estimator.qwen3_raw_mean_err_pct",
    "estimator.qwen3_chars4_mean_err_pct",
    "local.user_facts_kept_pct",
    "memory.assistant_kept_pct",
    "memory.failing_user_kept_pct",
    "memory.kept_4k_user_pct",
    "memory.lossy_user_kept_pct",
    "memory.mentioned_kept_pct",
    "memory.tool_args_kept_pct",
    "memory.tool_results_kept_pct",
    "memory.user_kept_pct",
    "replay.tool_results_kept_pct",
    "replay.fill_after_p95_pct",
    "replay.refire_pct",
    "sim.fill_after_mean_pct",
    "sim.fill_after_p95_pct",
    "sim.identifiers_kept_pct",
    "sim_skew.max_fill_pct",
    "sim_skew.max_overestimate_pct",
    "sim_skew.max_underestimate_pct",
    "toolloop.peak_fill_pct",
    "toolloop.uncapped_peak_fill_pct",
  ],
  tokens: [
    "sim.max_prompt_tokens",
    "sim_skew.max_prompt_tokens",
    "toolloop.result_tokens",
    "toolloop.uncapped_newest_result_min_tokens",
  ],
  ratio: [
    "sim.summarizer_input_ratio",
    "sim.summarizer_input_ratio_pruned",
    "tier1.noop_growth_ratio",
  ],
  fps: ["ui.scroll_fps_10k"],
  count: [
    "chat.turns",
    "estimator.conversations",
    "lifecycle.backtoback_409s",
    "lifecycle.backtoback_missing_replies",
    "local.silent_truncations_with_ps",
    "local.turns_to_detect",
    "memory.summaries_cut",
    "replay.calls",
    "security.csrf_routes_checked",
    "security.fuzz_5xx",
    "security.fuzz_partial_writes",
    "sim.first_steps_over_trigger",
    "sim_skew.chat_requests_beyond_steps",
    "toolloop.uncapped_tier2_trims",
    "toolloop200.completed",
    "ui.dom_nodes_10k",
  ],
};

describe("bench report units", () => {
  for (const [unit, figures] of Object.entries(FIGURES_BY_UNIT)) {
    it(`reads ${unit} from the names that hold it`, () => {
      expect(figures.map((figure) => [figure, unitOf(figure)])).toEqual(
        figures.map((figure) => [figure, unit]),
      );
    });
  }

  it("reads the unit from the name, not from the benchmark's prefix", () => {
    expect(unitOf("ms.turns")).toBe("count");
    expect(unitOf("seconds.wall_s")).toBe("s");
  });

  it("shows each row's unit before its notes", () => {
    const table = formatTable([
      { figure: "lifecycle.stop_to_provider_abort_ms_p95", value: 41.5, notes: "20 stops" },
      { figure: "lifecycle.crash_unlock_s", value: 30.2, notes: undefined },
      { figure: "lifecycle.backtoback_409s", value: 0, notes: "of 100 turns" },
    ]);
    const rows = table.split("\n").slice(2);
    expect(rows[0]).toMatch(/ 41\.5 {2}ms — 20 stops$/);
    expect(rows[1]).toMatch(/ 30\.2 {2}s$/);
    expect(rows[2]).toMatch(/ 0 {2}count — of 100 turns$/);
  });
});
