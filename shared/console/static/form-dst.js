// The job form's DST policy of a recurrence in a time zone (newer api-version; docs/decisions.md, "Occurrence
// control"): what runs when a spring-forward change skips a wall time the schedule names (`gap`: Shift, the
// default, or Skip) and when a fall-back change repeats one (`fold`: First, the default, Last or Both). A
// default is left out of the document, and with both defaults `dstPolicy` is too (its absence reads as the
// defaults). Shown only with a time zone, as the API refuses a policy without one: removing the zone removes it.
import { h } from "./dom.js";
import { field, get, put } from "./form-fields.js";

const POLICY = ["properties", "recurrence", "dstPolicy"];
const GAP = [["", "Shift (default): it runs at the first instant after the change"], ["Skip", "Skip: it does not run"]];
const FOLD = [["", "First (default): it runs at the first of the two"], ["Last", "Last: it runs at the second"],
  ["Both", "Both: it runs at each"]];

// The member as the select shows it: "" for the default, else the choice spelled as the form spells it.
const chosen = (choices) => (value) => (choices.find(([v]) => v && v.toLowerCase() === String(value).toLowerCase())
  || [""])[0];

export function dstFields(ctx) {
  const zoned = Boolean(get(ctx.doc, ["properties", "recurrence", "timeZone"]));
  return h("fieldset", { id: "dst-policy", hidden: !zoned },
    h("legend", {}, "Daylight saving time changes"),
    h("div", { class: "row" },
      field(ctx, "schedule-dst-gap", "A time the clocks skip (spring forward)", [...POLICY, "gap"], {
        choices: GAP, format: chosen(GAP), parse: (v) => v || undefined }),
      field(ctx, "schedule-dst-fold", "A time the clocks repeat (fall back)", [...POLICY, "fold"], {
        choices: FOLD, format: chosen(FOLD), parse: (v) => v || undefined })));
}

// After a change of the time zone: the policy shown with one; without one, dropped and back to the defaults.
export function zoneChanged(ctx) {
  const zoned = Boolean(get(ctx.doc, ["properties", "recurrence", "timeZone"]));
  const set = document.getElementById("dst-policy");
  if (set) set.hidden = !zoned;
  if (zoned) return;
  put(ctx.doc, POLICY, undefined);
  for (const id of ["schedule-dst-gap", "schedule-dst-fold"]) {
    const select = document.getElementById(id);
    if (select) select.value = "";
  }
}
