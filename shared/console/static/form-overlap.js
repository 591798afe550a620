// The job form's overlap and spread fields (newer api-version,
// docs/decisions.md "Overlap, limits, long-running completion, spread"): what an occurrence does while the previous one still runs, and the window its fixed
// offset lies in. Empty removes the member (Allow and no spread, the defaults).
import { h } from "./dom.js";
import { duration, field, seconds } from "./form-fields.js";

const POLICIES = [
  ["", "Allow (default): occurrences may overlap"],
  ["Skip", "Skip: skip an occurrence while the previous one runs"],
  ["BufferOne", "BufferOne: run it when the previous one ends (at most one waits)"],
];

export function overlapFields(ctx) {
  return [
    field(ctx, "job-overlap", "When the previous occurrence still runs", ["properties", "overlapPolicy"], {
      choices: POLICIES, format: (v) => (v && !/^allow$/i.test(v) ? v : ""), parse: (v) => v || undefined }),
    h("div", { class: "row" },
      field(ctx, "job-spread", "Spread window (seconds)", ["properties", "spreadWindow"], {
        type: "number", parse: duration, format: seconds, inputmode: "numeric",
        help: "Each occurrence fires at a fixed offset inside this window after its time, the same offset every "
          + "time (1 to 3600 seconds, at most the job's interval). Empty: on time." })),
  ];
}
