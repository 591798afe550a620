// Building blocks of the job form: reading and writing a property path of the job document, and fields
// bound to a path. The document stays the one source of truth: a field writes its value into it (an empty
// value removes the member), so members the form does not edit survive an edit untouched.

import { h } from "./dom.js";

export function get(doc, path) {
  return path.reduce((node, key) => (node && typeof node === "object" ? node[key] : undefined), doc);
}

// Set `value` at `path`, creating objects on the way; undefined (or "") removes the member and then any
// object it leaves empty.
export function put(doc, path, value) {
  const parents = [];
  let node = doc;
  for (const key of path.slice(0, -1)) {
    if (!node[key] || typeof node[key] !== "object") {
      if (value === undefined || value === "") return;
      node[key] = {};
    }
    parents.push([node, key]);
    node = node[key];
  }
  const last = path[path.length - 1];
  if (value === undefined || value === "") delete node[last];
  else node[last] = value;
  for (const [parent, key] of parents.reverse()) {
    const child = parent[key];
    if (child && typeof child === "object" && !Array.isArray(child) && Object.keys(child).length === 0) delete parent[key];
    else break;
  }
}

export const pathText = (path) => path.map((p, i) => (typeof p === "number" ? `[${p}]` : `${i ? "." : ""}${p}`)).join("");

// A labelled control bound to `path` of ctx.doc. `parse` turns its text into the member's value (undefined
// removes it) and `format` the member into text; `structural` re-renders the form after a change (a choice
// that shows other fields).
export function field(ctx, id, label, path, options = {}) {
  const { type = "text", parse = (v) => v, format = (v) => (v ?? ""), help, placeholder, choices, structural,
    rows, className, inputmode } = options;
  let control;
  if (choices) {
    control = h("select", { id }, choices.map(([value, text]) => h("option", { value }, text)));
  } else if (type === "textarea") {
    control = h("textarea", { id, rows: rows || 3, spellcheck: "false", class: className || null });
  } else {
    control = h("input", { id, type, placeholder, autocomplete: type === "password" ? "new-password" : "off",
      spellcheck: "false", inputmode });
  }
  control.dataset.path = pathText(path);
  control.value = format(get(ctx.doc, path));
  const changed = () => {
    put(ctx.doc, path, parse(control.value));
    if (structural) ctx.rerender(id);
    else ctx.changed();
  };
  control.addEventListener(choices ? "change" : "input", changed);
  const helpId = help ? `${id}-help` : null;
  if (helpId) control.setAttribute("aria-describedby", helpId);
  return h("div", { class: `field${options.wide ? " wide" : ""}` }, h("label", { for: id }, label), control,
    help ? h("p", { class: "muted", id: helpId }, help) : null);
}

export const trimmed = (v) => (v.trim() === "" ? undefined : v.trim());
export const number = (v) => (v.trim() === "" || Number.isNaN(Number(v)) ? undefined : Number(v));

// Durations: the API takes ISO 8601 ("PT30S") or .NET TimeSpan ("00:00:30"); the form shows seconds.
export function seconds(text) {
  if (!text) return "";
  const iso = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/i.exec(text);
  if (iso) return String(((Number(iso[1] || 0) * 24 + Number(iso[2] || 0)) * 60 + Number(iso[3] || 0)) * 60 + Number(iso[4] || 0));
  const span = /^(?:(\d+)\.)?(\d+):(\d+):(\d+(?:\.\d+)?)$/.exec(text);
  if (span) return String(((Number(span[1] || 0) * 24 + Number(span[2])) * 60 + Number(span[3])) * 60 + Number(span[4]));
  return text;
}

export function duration(text) {
  const n = Number(text);
  if (text.trim() === "" || !Number.isFinite(n) || n < 0) return trimmed(text);
  const whole = Math.round(n);
  const [d, hr, m, s] = [Math.floor(whole / 86400), Math.floor(whole / 3600) % 24, Math.floor(whole / 60) % 60, whole % 60];
  return `P${d ? `${d}D` : ""}${hr || m || s || !d ? "T" : ""}${hr ? `${hr}H` : ""}${m ? `${m}M` : ""}${s || (!d && !hr && !m) ? `${s}S` : ""}`;
}
