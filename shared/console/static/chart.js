// Attempts over time as inline SVG (every attempt: the first, each retry, the error action): x = when it
// started, y = lateness (start minus when it was due); success, failure and other outcomes differ in shape as
// well as colour, and the chart carries a text summary for screen readers (the table below it holds every
// value). Its counts are attempts, as the job's counters are.
import { h, seconds } from "./dom.js";
import { zoned, zonedShort } from "./zones.js";

const SVG = "http://www.w3.org/2000/svg";
const W = 720;
const H = 220;
const PAD = { left: 64, right: 16, top: 16, bottom: 36 };
const s = (tag, attrs = {}, ...children) => h(tag, { xmlns: SVG, ...attrs }, ...children);
// The drawing other charts share (forecast.js): SVG elements, the size and the margins of the plot.
export { s as svgNode, W as CHART_WIDTH, H as CHART_HEIGHT, PAD as CHART_PAD };

function mark(x, y, status, label) {
  const title = s("title", {}, label);
  if (status === "Completed") return s("circle", { cx: x, cy: y, r: 5, fill: "#17703a" }, title);
  if (status === "Failed") {
    return s("path", { d: `M${x - 5},${y - 5}L${x + 5},${y + 5}M${x - 5},${y + 5}L${x + 5},${y - 5}`,
      stroke: "#b3261e", "stroke-width": 2.5 }, title);
  }
  return s("rect", { x: x - 4, y: y - 4, width: 8, height: 8, fill: "#8a8a8a" }, title);
}

// Times in the job's zone (`zone`, its recurrence.timeZone), UTC beside; UTC alone without one.
export function historyChart(groups, zone) {
  const when = (iso) => zoned(iso, zone);
  const runs = groups.flatMap((g) => g.attempts).map((e) => e.properties || {}).filter((p) => p.startTime)
    .map((p) => ({ ...p, at: Date.parse(p.startTime),
      // A backfilled occurrence's instant is in the past by design: its start says nothing of lateness.
      late: p.expectedExecutionTime && p.trigger !== "Backfill"
        ? Date.parse(p.startTime) - Date.parse(p.expectedExecutionTime) : 0 }));
  const ok = runs.filter((r) => r.status === "Completed").length;
  const failed = runs.filter((r) => r.status === "Failed").length;
  const worst = runs.reduce((m, r) => Math.max(m, r.late), 0);
  const occurrences = groups.filter((g) => g.attempts.length).length;
  const summary = `${runs.length} attempt${runs.length === 1 ? "" : "s"} of ${occurrences} occurrence`
    + `${occurrences === 1 ? "" : "s"}: ${ok} succeeded, ${failed} failed, ${runs.length - ok - failed} other;`
    + ` largest lateness ${seconds(worst)}.`;
  const figure = h("figure", {});
  if (!runs.length) {
    figure.append(h("p", { class: "muted" }, "No runs yet."));
    return figure;
  }
  const t0 = Math.min(...runs.map((r) => r.at));
  const t1 = Math.max(...runs.map((r) => r.at));
  const yMax = Math.max(1000, worst);
  const x = (t) => PAD.left + (t1 === t0 ? (W - PAD.left - PAD.right) / 2 : ((t - t0) / (t1 - t0)) * (W - PAD.left - PAD.right));
  const y = (late) => H - PAD.bottom - (Math.max(0, late) / yMax) * (H - PAD.top - PAD.bottom);
  const svg = s("svg", { class: "chart", viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: "img",
    "aria-labelledby": "chart-title chart-desc" },
  s("title", { id: "chart-title" }, "Attempts over time and their lateness"),
  s("desc", { id: "chart-desc" }, summary),
  s("line", { x1: PAD.left, y1: H - PAD.bottom, x2: W - PAD.right, y2: H - PAD.bottom, stroke: "#8a8a8a" }),
  s("line", { x1: PAD.left, y1: PAD.top, x2: PAD.left, y2: H - PAD.bottom, stroke: "#8a8a8a" }),
  s("text", { x: PAD.left - 6, y: PAD.top + 4, "text-anchor": "end", "font-size": 11 }, seconds(yMax)),
  s("text", { x: PAD.left - 6, y: H - PAD.bottom, "text-anchor": "end", "font-size": 11 }, "0 s"),
  s("text", { x: 12, y: H / 2, "font-size": 11, transform: `rotate(-90 12 ${H / 2})`, "text-anchor": "middle" }, "lateness"),
  s("text", { x: PAD.left, y: H - 12, "font-size": 11 }, zonedShort(new Date(t0).toISOString(), zone)),
  s("text", { x: W - PAD.right, y: H - 12, "font-size": 11, "text-anchor": "end" }, zonedShort(new Date(t1).toISOString(), zone)),
  ...runs.map((r) => mark(x(r.at), y(r.late), r.status,
    `${when(r.startTime)}: ${r.status || "?"} (${r.actionName || "action"}, retry ${r.retryCount || 0}), late ${seconds(r.late)}`)));
  figure.append(svg,
    h("figcaption", { class: "legend" }, h("span", {}, "● completed"), h("span", {}, "✕ failed"),
      h("span", {}, "■ other (postponed, callback)"), h("span", {}, summary)));
  return figure;
}
