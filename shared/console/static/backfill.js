// The job page's backfill: run the job's occurrences of a past interval again (newer api-version), after a
// what-if of that interval. The times are typed as wall-clock times in the job's zone (or durations back from
// now, P7D); the server turns the form into the two requests (POST console/backfill: shared/console/backfill.py,
// where the rule is tested), the page sends the what-if and shows the occurrences it would run, and only then
// offers to run them: what runs is the request previewed, the same interval.
import { call, consoleBase } from "./api.js";
import { announce, failure, fill, h, table } from "./dom.js";
import { zoned } from "./zones.js";

const send = (request) => call(request.method, request.path, { query: request.query, body: request.body });

function occurrences(caption, answer, zone) {
  return table(caption, ["Occurrence", "Fires"],
    (answer.value || []).map((o) => [zoned(o.occurrenceTime, zone), zoned(o.fireTime, zone)]));
}

export function backfillSection(jobPath, zone) {
  const where = zone || "UTC";
  const since = h("input", { id: "backfill-from", name: "from", required: true, autocomplete: "off",
    spellcheck: "false", placeholder: "2026-03-29T09:00 or P1D", "aria-describedby": "backfill-help" });
  const until = h("input", { id: "backfill-to", name: "to", autocomplete: "off", spellcheck: "false",
    placeholder: "empty: now", "aria-describedby": "backfill-help" });
  const overlap = h("select", { id: "backfill-overlap" }, h("option", { value: "" }, "The job's"),
    ["Allow", "Skip", "BufferOne"].map((p) => h("option", { value: p }, p)));
  const result = h("div", { id: "backfill-result", "aria-live": "polite" });
  const run = h("button", { type: "button", id: "backfill-run", class: "danger", hidden: true }, "Run them again");
  let planned = null;

  const forget = () => { planned = null; run.hidden = true; };
  for (const input of [since, until, overlap]) input.addEventListener("input", forget);

  const preview = async (event) => {
    event.preventDefault();
    forget();
    announce("Backfill what-if…");
    let requests;
    try {
      requests = await call("POST", `${consoleBase()}/backfill`, { body: { job: jobPath, from: since.value,
        to: until.value, timeZone: zone || undefined, overlapPolicy: overlap.value || undefined } });
      const answer = await send(requests.preview);
      const n = (answer.value || []).length;
      fill(result, h("p", { id: "backfill-summary" }, n
        ? `${n} occurrence${n === 1 ? "" : "s"} from ${zoned(requests.run.body.from, zone)} to `
          + `${zoned(requests.run.body.to, zone)} would run again. Nothing is queued until you run them.`
        : "No occurrence of the job falls in this interval: nothing would run."),
      n ? occurrences("Would run again, oldest first", answer, zone) : null);
      if (n) {
        planned = requests.run;
        run.hidden = false;
      }
      announce("Backfill what-if done: nothing was queued.");
    } catch (error) {
      fill(result, failure(error, "The backfill would be refused"));
      announce("Backfill what-if: refused.");
    }
  };

  run.addEventListener("click", async () => {
    if (!planned) return;
    const request = planned;
    forget();
    announce("Backfill…");
    try {
      const answer = await send(request);
      const n = (answer.value || []).length;
      fill(result, h("p", { id: "backfill-done" }, `Queued ${n} occurrence${n === 1 ? "" : "s"}: each runs now `
        + "with an identity of its own and shows in the history once it has run."),
      occurrences("Queued, oldest first", answer, zone));
      announce(`Backfill: ${n} queued.`);
    } catch (error) {
      fill(result, failure(error, "Backfill"));
      announce("Backfill failed.");
    }
  });

  return h("section", { id: "backfill", "aria-labelledby": "backfill-heading" },
    h("h2", { id: "backfill-heading" }, "Backfill"),
    h("p", { class: "muted", id: "backfill-help" }, `Run the occurrences of a past interval again: from (inclusive) `
      + `to (exclusive, not after now), as wall-clock times in ${where} (2026-03-29T09:00), with Z or an offset, `
      + "or as a duration back from now (P1D, PT6H). You see what would run before anything is queued."),
    h("form", { id: "backfill-form", onsubmit: preview, novalidate: true },
      h("div", { class: "row" },
        h("div", { class: "field" }, h("label", { for: "backfill-from" }, "From"), since),
        h("div", { class: "field" }, h("label", { for: "backfill-to" }, "To"), until),
        h("div", { class: "field" }, h("label", { for: "backfill-overlap" }, "Overlap policy"), overlap)),
      h("div", { class: "buttons" }, h("button", { type: "submit", id: "backfill-preview", class: "secondary" },
        "What would run"), run)),
    result);
}
