// Where a property path ("properties.recurrence.schedule.hours[2]") is written in the JSON text of a job, so
// the job form's JSON tab can show the API's error at its line and select the property.
// Each key is searched for after the previous one.
export function locate(text, path) {
  let at = 0;
  let found = null;
  for (const part of path.split(".")) {
    const m = /^([^[\]]+)((?:\[\d+\])*)$/.exec(part);
    if (!m) break;
    const key = new RegExp(`"${m[1].replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}"\\s*:`, "i");
    const hit = key.exec(text.slice(at));
    if (!hit) break;
    found = { start: at + hit.index, end: at + hit.index + hit[0].length - 1 };
    at = found.end;
  }
  if (!found) return null;
  const line = text.slice(0, found.start).split("\n").length;
  return { ...found, line };
}
