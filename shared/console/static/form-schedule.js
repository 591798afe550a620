// The job form's schedule: once, on a recurrence (frequency and interval, at these times, on these days) or on a
// cron expression (`recurrence.cron`, newer api-version: then no frequency, interval or schedule is sent), in a
// time zone with its DST policy (form-dst.js), from a start, until a count or an end; and its live preview: the
// schedule in words and the next occurrences, computed by the scheduler's own engine (POST console/schedule) as
// the form changes.

import { schedules } from "./api.js";
import { fill, h } from "./dom.js";
import { dstFields, zoneChanged } from "./form-dst.js";
import { field, get, number, put } from "./form-fields.js";
import { utcToZoned, zoned, zonedToUtc } from "./zones.js";

const FREQUENCIES = [["Minute", "minutes"], ["Hour", "hours"], ["Day", "days"], ["Week", "weeks"], ["Month", "months"],
  ["Year", "years (extension)"]];
const DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
const ORDINALS = [["first", 1], ["second", 2], ["third", 3], ["fourth", 4], ["fifth", 5], ["last", -1],
  ["second-to-last", -2], ["third-to-last", -3], ["fourth-to-last", -4], ["fifth-to-last", -5]];
const REC = ["properties", "recurrence"];
const SCHEDULE = [...REC, "schedule"];
const two = (n) => String(n).padStart(2, "0");
const cap = (s) => (s ? s[0].toUpperCase() + s.slice(1).toLowerCase() : s);

function timesText(schedule) {
  const hours = [].concat(schedule.hours ?? []);
  const minutes = [].concat(schedule.minutes ?? []);
  if (!hours.length) return minutes.map((m) => `:${two(m)}`).join(", ");
  return hours.flatMap((hr) => (minutes.length ? minutes : [0]).map((m) => `${two(hr)}:${two(m)}`)).join(", ");
}

// "09:00, 17:30" -> hours [9, 17] and minutes [0, 30] (the API runs every combination: `extra` lists the
// ones not written); ":15, :45" -> minutes past every hour.
export function parseTimes(text) {
  const items = text.split(",").map((t) => t.trim()).filter(Boolean);
  if (!items.length) return { hours: undefined, minutes: undefined, extra: [] };
  const past = items.every((t) => /^:\d{1,2}$/.test(t));
  if (past) {
    const minutes = [...new Set(items.map((t) => Number(t.slice(1))))].sort((a, b) => a - b);
    return minutes.some((m) => m > 59) ? { error: "a minute is 0 to 59" } : { hours: undefined, minutes, extra: [] };
  }
  const parsed = items.map((t) => /^(\d{1,2}):(\d{2})$/.exec(t));
  if (parsed.some((m) => !m)) return { error: "write times as hh:mm (09:00, 17:30), or :mm for minutes past every hour" };
  const pairs = parsed.map((m) => [Number(m[1]), Number(m[2])]);
  if (pairs.some(([hr, m]) => hr > 23 || m > 59)) return { error: "hours are 0 to 23, minutes 0 to 59" };
  const hours = [...new Set(pairs.map(([hr]) => hr))].sort((a, b) => a - b);
  const minutes = [...new Set(pairs.map(([, m]) => m))].sort((a, b) => a - b);
  const written = new Set(pairs.map(([hr, m]) => `${two(hr)}:${two(m)}`));
  const extra = hours.flatMap((hr) => minutes.map((m) => `${two(hr)}:${two(m)}`)).filter((t) => !written.has(t));
  return { hours, minutes, extra };
}

function occurrencesText(list) {
  return (list || []).map((o) => `${(ORDINALS.find(([, n]) => n === o.occurrence) || ["every"])[0]} ${cap(o.day)}`).join(", ");
}

function parseOccurrences(text) {
  const items = text.split(",").map((t) => t.trim()).filter(Boolean);
  const out = [];
  for (const item of items) {
    const m = /^(\S+)\s+(\w+)$/.exec(item);
    const ordinal = m && ORDINALS.find(([word, n]) => word === m[1].toLowerCase() || String(n) === m[1]);
    const day = m && DAYS.find((d) => d.toLowerCase() === m[2].toLowerCase());
    if (!ordinal || !day) return { error: `"${item}": write e.g. first Monday, last Friday` };
    out.push({ day, occurrence: ordinal[1] });
  }
  return { list: out.length ? out : undefined };
}

function textField(ctx, id, label, path, text, parse, help) {
  const input = h("input", { id, value: text, autocomplete: "off", spellcheck: "false", "aria-describedby": `${id}-note` });
  input.dataset.path = path;
  const note = h("p", { class: "muted", id: `${id}-note` }, help);
  input.addEventListener("input", () => {
    const problem = parse(input.value);
    note.textContent = problem || help;
    note.className = problem ? "field-error" : "muted";
    ctx.changed();
  });
  return h("div", { class: "field wide" }, h("label", { for: id }, label), input, note);
}

function days(ctx) {
  const chosen = new Set([].concat(get(ctx.doc, [...SCHEDULE, "weekDays"]) || []).map((d) => d.toLowerCase()));
  const boxes = DAYS.map((day) => {
    const box = h("input", { type: "checkbox", id: `day-${day.toLowerCase()}`, checked: chosen.has(day.toLowerCase()) });
    box.dataset.path = "properties.recurrence.schedule.weekDays";
    box.addEventListener("change", () => {
      const picked = DAYS.filter((d) => document.getElementById(`day-${d.toLowerCase()}`).checked);
      put(ctx.doc, [...SCHEDULE, "weekDays"], picked.length ? picked : undefined);
      ctx.changed();
    });
    return h("label", {}, box, ` ${day}`);
  });
  return h("fieldset", { class: "days-set" }, h("legend", {}, "On these week days"), h("div", { class: "days" }, boxes));
}

// The API takes week days only with a weekly frequency, and days of the month only with a monthly one: a change
// of frequency drops those the new one cannot take (their fields are shown only with theirs), so none is sent.
function withoutOtherDays(ctx, frequency) {
  if (frequency !== "Week") put(ctx.doc, [...SCHEDULE, "weekDays"], undefined);
  if (frequency !== "Month") {
    put(ctx.doc, [...SCHEDULE, "monthDays"], undefined);
    put(ctx.doc, [...SCHEDULE, "monthlyOccurrences"], undefined);
  }
  return frequency;
}

function zoneOf(ctx) {
  return get(ctx.doc, [...REC, "timeZone"]) || "UTC";
}

// The start and end are written as wall-clock times in the schedule's zone; they follow a change of zone.
function instantField(ctx, id, label, path, key) {
  if (ctx[key] === undefined) ctx[key] = utcToZoned(get(ctx.doc, path), zoneOf(ctx));
  const input = h("input", { id, type: "datetime-local", value: ctx[key], "aria-describedby": `${id}-help` });
  input.dataset.path = path.join(".");
  input.addEventListener("input", () => {
    ctx[key] = input.value;
    put(ctx.doc, path, input.value ? zonedToUtc(input.value, zoneOf(ctx)) : undefined);
    ctx.changed();
  });
  const help = key === "startWall" ? "Empty: from now." : "";
  return h("div", { class: "field" }, h("label", { for: id }, label), input,
    h("p", { class: "muted zone-note", id: `${id}-help` }, `${help} In ${zoneOf(ctx)}.`.trim()));
}

function zoneField(ctx) {
  const input = h("input", { id: "schedule-zone", list: "zone-names", value: get(ctx.doc, [...REC, "timeZone"]) || "",
    placeholder: "UTC", autocomplete: "off", spellcheck: "false", "aria-describedby": "schedule-zone-help" });
  input.dataset.path = "properties.recurrence.timeZone";
  const names = typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : [];
  input.addEventListener("input", () => {
    put(ctx.doc, [...REC, "timeZone"], input.value.trim() || undefined);
    for (const [key, path] of [["startWall", ["properties", "startTime"]], ["endWall", [...REC, "endTime"]]]) {
      if (ctx[key]) put(ctx.doc, path, zonedToUtc(ctx[key], zoneOf(ctx)));
    }
    for (const note of document.querySelectorAll(".zone-note")) note.textContent = note.textContent.replace(/In .*\.$/, `In ${zoneOf(ctx)}.`);
    zoneChanged(ctx);
    ctx.changed();
  });
  return h("div", { class: "field" }, h("label", { for: "schedule-zone" }, "Time zone"), input,
    h("datalist", { id: "zone-names" }, names.map((n) => h("option", { value: n }))),
    h("p", { class: "muted", id: "schedule-zone-help" }, "IANA name (Europe/London); times and days are wall-clock times there. Empty: UTC."));
}

// Once, on a schedule or on cron; `ctx.kind` keeps the choice while the cron field is empty.
function kindOf(ctx) {
  const rec = get(ctx.doc, REC);
  ctx.kind = ctx.kind || (!rec ? "once" : rec.cron !== undefined ? "cron" : "recurring");
  return ctx.kind;
}

// A change of kind keeps what both kinds of recurrence have: the zone, its DST policy and the end.
function recurrenceOf(ctx, kind) {
  ctx.kind = kind;
  if (kind === "once") return undefined;
  const rec = get(ctx.doc, REC) || {};
  const kept = Object.fromEntries(["timeZone", "dstPolicy", "count", "endTime"].filter((k) => rec[k] !== undefined)
    .map((k) => [k, rec[k]]));
  return kind === "cron" ? { cron: "0 9 * * 1-5", ...kept } : { frequency: "Day", interval: 1, ...kept };
}

function cronField(ctx) {
  return textField(ctx, "schedule-cron", "Cron expression", "properties.recurrence.cron",
    get(ctx.doc, [...REC, "cron"]) || "", (text) => {
      put(ctx.doc, [...REC, "cron"], text.trim() || undefined);
      return text.trim() ? null : "a cron expression is required";
    }, "Five fields: minute hour day-of-month month day-of-week (0 9 * * 1-5: 09:00 on week days), or a macro "
      + "such as @daily; on the wall clock of the time zone below.");
}

export function scheduleFields(ctx) {
  const kind = kindOf(ctx);
  const runs = field(ctx, "schedule-kind", "Runs", ["properties", "recurrence"], {
    choices: [["once", "Once"], ["recurring", "On a schedule"], ["cron", "On a cron expression"]], structural: true,
    format: () => kind, parse: (v) => recurrenceOf(ctx, v) });
  if (kind === "once") {
    return [runs, instantField(ctx, "job-start", "At", ["properties", "startTime"], "startWall")];
  }
  // "At a time" stays chosen while its time is still empty (`ctx.endKind`, the choice made here).
  const end = ctx.endKind || (get(ctx.doc, [...REC, "count"]) !== undefined ? "count"
    : get(ctx.doc, [...REC, "endTime"]) ? "until" : "never");
  const common = [
    h("div", { class: "row" }, zoneField(ctx), instantField(ctx, "job-start", "Starting", ["properties", "startTime"], "startWall")),
    dstFields(ctx),
    h("div", { class: "row" },
      field(ctx, "schedule-end", "Ends", [...REC, "count"], { choices: [["never", "Never"], ["count", "After a number of runs"],
        ["until", "At a time"]], structural: true, format: () => end,
      parse: (v) => {
        put(ctx.doc, [...REC, "endTime"], undefined);
        ctx.endWall = "";
        ctx.endKind = v;
        return v === "count" ? 10 : undefined;
      } }),
      end === "count" ? field(ctx, "schedule-count", "Runs", [...REC, "count"], { type: "number", parse: number }) : null,
      end === "until" ? instantField(ctx, "schedule-end-time", "Until", [...REC, "endTime"], "endWall") : null),
  ];
  if (kind === "cron") return [runs, cronField(ctx), ...common];
  const schedule = get(ctx.doc, SCHEDULE) || {};
  const frequency = (FREQUENCIES.find(([f]) => f.toLowerCase() === String(get(ctx.doc, [...REC, "frequency"])).toLowerCase()) || FREQUENCIES[2])[0];
  return [
    runs,
    h("div", { class: "row" },
      field(ctx, "schedule-interval", "Every", [...REC, "interval"], { type: "number", parse: number, inputmode: "numeric" }),
      field(ctx, "schedule-frequency", "Frequency", [...REC, "frequency"], { choices: FREQUENCIES, format: () => frequency,
        structural: true, parse: (v) => withoutOtherDays(ctx, v) })),
    textField(ctx, "schedule-times", "At these times", "properties.recurrence.schedule.hours", timesText(schedule), (text) => {
      const parsed = parseTimes(text);
      if (parsed.error) return parsed.error;
      put(ctx.doc, [...SCHEDULE, "hours"], parsed.hours);
      put(ctx.doc, [...SCHEDULE, "minutes"], parsed.minutes);
      return parsed.extra.length ? `Every hour is combined with every minute, so it also runs at ${parsed.extra.join(", ")}.` : null;
    }, "hh:mm, comma-separated (09:00, 17:30); :mm for minutes past every hour. Empty: the start's time."),
    frequency === "Week" ? days(ctx) : null,
    frequency !== "Month" ? null : h("div", { class: "row" },
      textField(ctx, "schedule-month-days", "On these days of the month", "properties.recurrence.schedule.monthDays",
        [].concat(schedule.monthDays ?? []).join(", "), (text) => {
          const values = text.split(",").map((t) => t.trim()).filter(Boolean).map(Number);
          if (values.some((n) => !Number.isInteger(n) || n === 0 || n < -31 || n > 31)) return "days are 1 to 31, or -1 (the last) to -31";
          put(ctx.doc, [...SCHEDULE, "monthDays"], values.length ? values : undefined);
          return null;
        }, "1, 15, -1 (the last day)."),
      textField(ctx, "schedule-occurrences", "On these week days of the month", "properties.recurrence.schedule.monthlyOccurrences",
        occurrencesText(schedule.monthlyOccurrences), (text) => {
          const parsed = parseOccurrences(text);
          if (parsed.error) return parsed.error;
          put(ctx.doc, [...SCHEDULE, "monthlyOccurrences"], parsed.list);
          return null;
        }, "first Monday, last Friday.")),
    ...common,
  ];
}

// The preview box, refreshed (debounced) on every change of the document.
export function schedulePreview(ctx) {
  const box = h("section", { class: "preview", id: "schedule-preview", "aria-live": "polite", "aria-labelledby": "preview-heading" },
    h("h2", { id: "preview-heading" }, "Next occurrences"), h("p", { class: "muted" }, "…"));
  let timer = null;
  let asked = 0;
  const refresh = async () => {
    const p = ctx.doc.properties || {};
    const ticket = ++asked;
    let answer;
    try {
      [answer] = await schedules([{ startTime: p.startTime, recurrence: p.recurrence }], 10);
    } catch (error) {
      answer = { error: { message: String(error) } };
    }
    if (ticket !== asked) return; // a newer change is already being previewed
    const zone = (p.recurrence || {}).timeZone;
    fill(box, h("h2", { id: "preview-heading" }, "Next occurrences"),
      answer.error ? h("p", { class: "field-error", id: "preview-error" }, answer.error.message)
        : h("p", { id: "preview-words" }, answer.description),
      answer.occurrences && answer.occurrences.length
        ? h("ol", { id: "preview-list" }, answer.occurrences.map((o) => h("li", {}, zoned(o, zone))))
        : answer.error ? null : h("p", { class: "muted" }, "None: the schedule has no occurrence left."));
  };
  ctx.previews = () => {
    clearTimeout(timer);
    timer = setTimeout(refresh, 250);
  };
  refresh();
  return box;
}
