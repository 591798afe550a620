// A collection's load forecast (GET .../forecast, newer api-version; shared/api/forecast.py): its occurrences per
// minute over the next 24 hours as bars (chart.js's drawing), a minute holding a second over a destination's rate
// limit marked by a triangle (▼) as well as a colour, and those seconds listed per destination. The chart carries a
// text summary for screen readers; the list holds the seconds themselves. Times in UTC (a collection has no zone).
// With the collection's autoSpread the API counts each occurrence where the dispatcher places it; a line says so.
import { call } from "./api.js";
import { CHART_HEIGHT as H, CHART_PAD as PAD, CHART_WIDTH as W, svgNode as s } from "./chart.js";
import { failure, fill, h } from "./dom.js";
import { zoned, zonedShort } from "./zones.js";

const HOURS = 24;
const LISTED = 10; // over-limit seconds listed per destination
const MINUTE = 60_000;

const minuteOf = (iso) => Math.floor(Date.parse(iso) / MINUTE) * MINUTE;

export function forecastChart(answer) {
  const t0 = Date.parse(answer.from);
  const t1 = Date.parse(answer.to);
  const minutes = answer.minutes || [];
  const over = new Set((answer.destinations || []).flatMap((d) => (d.overLimit || []).map((o) => minuteOf(o.second))));
  const total = minutes.reduce((n, m) => n + m.count, 0);
  const busiest = minutes.reduce((best, m) => (best && best.count >= m.count ? best : m), null);
  const summary = `${total} occurrence${total === 1 ? "" : "s"} in the next ${HOURS} hours`
    + (busiest ? `; the busiest minute ${zonedShort(busiest.minute, null)} with ${busiest.count}` : "")
    + `; ${over.size} minute${over.size === 1 ? "" : "s"} with a second over a destination's rate limit.`;
  const figure = h("figure", { id: "forecast-chart" });
  if (!minutes.length) {
    figure.append(h("p", { class: "muted" }, `Nothing fires in the next ${HOURS} hours.`));
    return figure;
  }
  const yMax = Math.max(1, ...minutes.map((m) => m.count));
  const plot = W - PAD.left - PAD.right;
  const width = Math.max(1, plot / ((t1 - t0) / MINUTE));
  const x = (t) => PAD.left + ((t - t0) / (t1 - t0)) * plot;
  const y = (n) => H - PAD.bottom - (n / yMax) * (H - PAD.top - PAD.bottom);
  const bar = (m) => {
    const at = minuteOf(m.minute);
    const crowded = over.has(at);
    const label = `${zonedShort(m.minute, null)}: ${m.count} occurrence${m.count === 1 ? "" : "s"}`
      + (crowded ? ", a second over a rate limit" : "");
    const left = Math.max(PAD.left, x(at));
    return s("g", { class: crowded ? "over-limit" : "within" }, s("title", {}, label),
      s("rect", { x: left, y: y(m.count), width, height: H - PAD.bottom - y(m.count),
        fill: crowded ? "#b3261e" : "#0b5cad" }),
      crowded ? s("path", { d: `M${left + width / 2 - 5},${PAD.top - 2}l5,8l5,-8z`, fill: "#b3261e" }) : null);
  };
  figure.append(s("svg", { class: "chart", viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: "img",
    "aria-labelledby": "forecast-title forecast-desc" },
  s("title", { id: "forecast-title" }, `Occurrences per minute, the next ${HOURS} hours`),
  s("desc", { id: "forecast-desc" }, summary),
  s("line", { x1: PAD.left, y1: H - PAD.bottom, x2: W - PAD.right, y2: H - PAD.bottom, stroke: "#8a8a8a" }),
  s("line", { x1: PAD.left, y1: PAD.top, x2: PAD.left, y2: H - PAD.bottom, stroke: "#8a8a8a" }),
  s("text", { x: PAD.left - 6, y: PAD.top + 4, "text-anchor": "end", "font-size": 11 }, String(yMax)),
  s("text", { x: PAD.left - 6, y: H - PAD.bottom, "text-anchor": "end", "font-size": 11 }, "0"),
  s("text", { x: 12, y: H / 2, "font-size": 11, transform: `rotate(-90 12 ${H / 2})`, "text-anchor": "middle" }, "per minute"),
  s("text", { x: PAD.left, y: H - 12, "font-size": 11 }, zonedShort(answer.from, null)),
  s("text", { x: W - PAD.right, y: H - 12, "font-size": 11, "text-anchor": "end" }, zonedShort(answer.to, null)),
  ...minutes.map(bar)),
  h("figcaption", { class: "legend" }, h("span", {}, "▮ occurrences in a minute"),
    h("span", {}, "▼ a second in it over a destination's rate limit"), h("span", {}, summary)));
  return figure;
}

function overLimitList(answer) {
  const crowded = (answer.destinations || []).filter((d) => (d.overLimit || []).length);
  if (!crowded.length) {
    const limited = (answer.destinations || []).some((d) => d.limit !== null && d.limit !== undefined);
    return h("p", { id: "forecast-over-limit", class: "muted" },
      limited ? "No second goes over a destination's rate limit." : "No destination has a rate limit.");
  }
  return h("ul", { id: "forecast-over-limit" }, crowded.map((d) => {
    const more = (d.overLimitSeconds || d.overLimit.length) - Math.min(LISTED, d.overLimit.length);
    return h("li", {}, `${d.destination} (at most ${d.limit}/s${d.limitHost && d.limitHost !== d.destination
      ? ` under ${d.limitHost}` : ""}): `,
    d.overLimit.slice(0, LISTED).map((o) => `${zoned(o.second, null)} (${o.count})`).join("; "),
    more > 0 ? `; and ${more} more` : "");
  }));
}

// What the chart counts under autoSpread (docs/decisions.md, "Automatic spread"): the static rules' budget only.
function spreadNote(autoSpread) {
  const tolerance = (autoSpread || {}).tolerance;
  return tolerance ? h("p", { id: "forecast-spread", class: "note" }, `With autoSpread, the occurrences of a `
    + `crowded second are counted where they will fire: up to ${tolerance} later, before their job's next `
    + "occurrence. A second still listed had no room within that; a rate learned from push-back is not forecast.")
    : null;
}

// The page's forecast section: filled when the answer comes, so the rest of the page does not wait for it.
export function forecastSection(ids, autoSpread) {
  const heading = h("h2", { id: "forecast-heading" }, `Forecast: the next ${HOURS} hours`);
  const box = h("section", { id: "forecast", "aria-labelledby": "forecast-heading" }, heading, h("p", {}, "Loading…"));
  call("GET", `${ids.path}/forecast`, { query: { hours: HOURS } })
    .then((answer) => fill(box, heading, forecastChart(answer),
      h("h3", {}, "Seconds over a destination's rate limit"), overLimitList(answer), spreadNote(autoSpread),
      (answer.notes || []).map((n) => h("p", { class: "note" }, n.message))))
    .catch((error) => fill(box, heading, failure(error, "Could not read the forecast")));
  return box;
}
