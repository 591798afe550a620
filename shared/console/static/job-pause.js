// A job's pause on its page (newer api-version; docs/decisions.md, "Occurrence control"): `properties.pause`
// `{until, note}` holds every occurrence due before `until`, and the job resumes by itself then. A pause in force
// is shown above the job's actions; **Pause until…** asks for the instant (a wall-clock time in the job's zone,
// or with Z or an offset) and a note and PATCHes `{"properties": {"pause": {until, note}}}`; **Resume now**
// PATCHes `{"properties": {"pause": null}}` (the job's missed-run policy then decides what of the held
// occurrences runs, as at the pause's own end). A pause whose `until` has passed changes nothing: not shown.
import { call } from "./api.js";
import { announce, failure, fill, h } from "./dom.js";
import { readInstant, utcToZoned, zoned } from "./zones.js";

export const inForce = (pause) => Boolean(pause && pause.until && Date.parse(pause.until) > Date.now());

export function pauseBanner(pause, zone) {
  if (!inForce(pause)) return null;
  return h("div", { class: "paused-banner", id: "pause-banner" },
    `Paused until ${zoned(pause.until, zone)}${pause.note ? `: ${pause.note}` : ""}`);
}

// The two actions (for the job's toolbar) and the pause's form (under it). `act(label, work)` runs a change
// as the page's other actions do (buttons disabled, a refusal shown in #action-result); `reload` renders the
// page again.
export function pauseControls({ jobPath, pause, zone, act, reload }) {
  const where = zone || "UTC";
  const paused = inForce(pause);
  const until = h("input", { id: "pause-until", autocomplete: "off", spellcheck: "false", placeholder: "2026-03-29T09:00",
    value: paused ? utcToZoned(pause.until, zone) : "", "aria-describedby": "pause-until-help" });
  const note = h("input", { id: "pause-note", autocomplete: "off", maxlength: 500,
    value: paused ? pause.note || "" : "" });
  const result = h("div", { id: "pause-result" });
  const form = h("form", { id: "pause-form", class: "inline-form", hidden: true, novalidate: true },
    h("div", { class: "field" }, h("label", { for: "pause-until" }, "Paused until"), until,
      h("p", { class: "muted", id: "pause-until-help" }, `A wall-clock time in ${where} (2026-03-29T09:00), or with Z `
        + "or an offset. No occurrence due before it runs; the job resumes by itself then.")),
    h("div", { class: "field" }, h("label", { for: "pause-note" }, "Note (optional)"), note),
    h("div", { class: "buttons" }, h("button", { type: "submit", id: "pause-save" }, "Pause"),
      h("button", { type: "button", id: "pause-dismiss", class: "secondary" }, "Cancel")),
    result);
  const open = h("button", { type: "button", id: "pause-open", class: "secondary", "aria-expanded": "false",
    "aria-controls": "pause-form" }, "Pause until…");
  const toggle = (shown) => {
    form.hidden = !shown;
    open.setAttribute("aria-expanded", String(shown));
    (shown ? until : open).focus();
  };
  open.addEventListener("click", () => toggle(form.hidden));
  form.querySelector("#pause-dismiss").addEventListener("click", () => toggle(false));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const at = readInstant(until.value, zone);
    if (!at) {
      fill(result, failure(`Paused until: write a wall-clock time in ${where} (2026-03-29T09:00), or one with Z or `
        + "an offset."));
      until.focus();
      return;
    }
    fill(result);
    const wanted = { until: at, ...(note.value.trim() ? { note: note.value.trim() } : {}) };
    act("Pause", async () => {
      await call("PATCH", jobPath, { body: { properties: { pause: wanted } } });
      announce(`Paused until ${zoned(at, zone)}.`);
      await reload();
    });
  });
  const resume = paused ? h("button", { type: "button", id: "resume", onclick: () => act("Resume", async () => {
    await call("PATCH", jobPath, { body: { properties: { pause: null } } });
    announce("Resumed.");
    await reload();
  }) }, "Resume now") : null;
  return { buttons: [open, resume], form };
}
