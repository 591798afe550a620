// Small DOM and formatting helpers: elements are built with textContent only (never innerHTML), so
// nothing the API returns is ever parsed as markup.
import { session, signIn, signInEnabled } from "./auth.js";

export function h(tag, attrs = {}, ...children) {
  const el = document.createElementNS(attrs.xmlns || "http://www.w3.org/1999/xhtml", tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "xmlns" || v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "text") el.textContent = v;
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export const main = () => document.getElementById("main");

// `el`'s children become `nodes`, leaving out the absent ones (null, undefined, false): replaceChildren would
// show them as the text "null".
export function fill(el, ...nodes) {
  el.replaceChildren(...nodes.flat().filter((n) => n !== null && n !== undefined && n !== false));
  return el;
}

export function show(...nodes) {
  fill(main(), ...nodes);
}

export function announce(message) {
  document.getElementById("status").textContent = message;
}

// An error as an alert. A refusal says what to do about it: sign in (again) when the API wants a
// token, and ask for a role when the signed-in user has none that allows the action.
export function failure(error, context) {
  const box = h("div", { class: "error", role: "alert" },
    h("p", {}, context ? `${context}: ` : "", String(error)));
  const status = error && error.status;
  if (status === 401 && signInEnabled()) {
    box.append(h("p", {}, h("button", { type: "button", class: "sign-in-again", onclick: () => signIn() },
      error.code === "SignInRequired" ? "Sign in" : "Sign in again")));
  } else if (status === 403) {
    const who = signInEnabled() && session() ? `You are signed in as ${session().user || "a user"}, whose` : "Your";
    box.append(h("p", { class: "hint" }, `${who} role assignments do not allow this here. An Owner of this `
      + "collection, its resource group or the subscription can assign you a role: Reader to see, Contributor "
      + "to change."));
  }
  return box;
}

export function stateBadge(state) {
  const text = state || "unknown";
  return h("span", { class: `state state-${text.toLowerCase()}` }, text[0].toUpperCase() + text.slice(1));
}

export function seconds(ms) {
  const s = ms / 1000;
  if (Math.abs(s) < 120) return `${s.toFixed(1)} s`;
  return `${(s / 60).toFixed(1)} min`;
}

// On a narrow screen each row becomes a card whose cells carry their column's name (data-label), so no
// table makes the page scroll sideways.
export function table(caption, head, rows, numeric = []) {
  return h("table", { class: "data" },
    h("caption", {}, caption),
    h("thead", {}, h("tr", {}, head.map((c, i) => h("th", { scope: "col", class: numeric.includes(i) ? "num" : null }, c)))),
    h("tbody", {}, rows.length ? rows.map((r) => h("tr", {}, r.map((c, i) => (i === 0
      ? h("th", { scope: "row", "data-label": head[i] }, c)
      : h("td", { class: numeric.includes(i) ? "num" : null, "data-label": head[i] }, c)))))
      : h("tr", {}, h("td", { colspan: head.length, class: "muted" }, "None."))));
}

// A long text (an Http action's history message holds the whole response) folded behind an expander: its
// start on one line, the whole of it, wrapped, when opened.
export function folded(text, limit = 140) {
  const flat = (text || "").replace(/\s+/g, " ").trim();
  if (flat.length <= limit) return h("span", { class: "message" }, flat);
  return h("details", { class: "message" }, h("summary", {}, `${flat.slice(0, limit)}…`),
    h("pre", { class: "message-full" }, text));
}

// The dialog asks before anything destructive; resolves true only on an explicit confirmation.
export function confirmAction(title, text, ok = "Delete") {
  const dialog = document.getElementById("confirm");
  document.getElementById("confirm-title").textContent = title;
  document.getElementById("confirm-text").textContent = text;
  document.getElementById("confirm-ok").textContent = ok;
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
    dialog.returnValue = "cancel";
    dialog.showModal();
    document.getElementById("confirm-cancel").focus();
  });
}
