// Instants for people: a job's times in its own time zone (recurrence.timeZone) with UTC beside, and the
// wall-clock time the job form takes in that zone turned into the UTC instant the API stores.
const formats = new Map();

function format(zone) {
  if (!formats.has(zone)) {
    formats.set(zone, new Intl.DateTimeFormat("en-GB", { timeZone: zone, year: "numeric", month: "2-digit",
      day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23" }));
  }
  return formats.get(zone);
}

// { year, month, day, hour, minute, second } of `date` on the wall clocks of `zone`, as numbers.
function wall(date, zone) {
  const out = {};
  for (const p of format(zone).formatToParts(date)) if (p.type !== "literal") out[p.type] = Number(p.value);
  return out;
}

const two = (n) => String(n).padStart(2, "0");
const dateOf = (w) => `${w.year}-${two(w.month)}-${two(w.day)}`;
const timeOf = (w) => `${two(w.hour)}:${two(w.minute)}:${two(w.second)}`;

export function validZone(zone) {
  if (!zone) return false;
  try {
    format(zone);
    return true;
  } catch {
    return false;
  }
}

export const isUtc = (zone) => !zone || /^(utc|etc\/utc|etc\/gmt|gmt|z)$/i.test(zone);

// "2026-11-27 09:00:00 Europe/London (09:00:00 UTC)"; the UTC date too when it is another day; UTC alone for
// a job without a zone (or one the browser does not know).
export function zoned(iso, zone) {
  if (!iso) return "—";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const utc = wall(d, "UTC");
  if (isUtc(zone) || !validZone(zone)) return `${dateOf(utc)} ${timeOf(utc)} UTC`;
  const local = wall(d, zone);
  const beside = dateOf(local) === dateOf(utc) ? timeOf(utc) : `${dateOf(utc)} ${timeOf(utc)}`;
  return `${dateOf(local)} ${timeOf(local)} ${zone} (${beside} UTC)`;
}

// The shorter form where space is short (a chart's axis): "2026-11-27 09:00:00 Europe/London", without UTC beside.
export function zonedShort(iso, zone) {
  const d = new Date(iso || "");
  if (Number.isNaN(d.getTime())) return iso || "—";
  const utc = isUtc(zone) || !validZone(zone);
  const w = wall(d, utc ? "UTC" : zone);
  return `${dateOf(w)} ${timeOf(w)} ${utc ? "UTC" : zone}`;
}

// The UTC instant ("...Z") of a wall-clock time "YYYY-MM-DDTHH:MM[:SS]" in `zone`; null when unreadable. A
// time skipped by a clock change moves forward by the change, as the scheduler's engine does.
export function zonedToUtc(local, zone) {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(local || "");
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1).map((v) => Number(v || 0));
  const asUtc = Date.UTC(y, mo - 1, d, h, mi, s);
  if (isUtc(zone) || !validZone(zone)) return new Date(asUtc).toISOString().replace(".000Z", "Z");
  let guess = asUtc;
  for (let i = 0; i < 3; i += 1) { // the zone's offset at the guess, then at the corrected instant
    const w = wall(new Date(guess), zone);
    const offset = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second) - guess;
    guess = asUtc - offset;
  }
  return new Date(guess).toISOString().replace(".000Z", "Z");
}

// The wall-clock form ("YYYY-MM-DDTHH:MM") of a UTC instant in `zone`, for a datetime-local input.
export function utcToZoned(iso, zone) {
  const d = new Date(iso || "");
  if (Number.isNaN(d.getTime())) return "";
  const w = wall(d, isUtc(zone) || !validZone(zone) ? "UTC" : zone);
  return `${dateOf(w)}T${two(w.hour)}:${two(w.minute)}`;
}

// What a person typed for an instant, as the UTC instant ("...Z") the API takes; null when unreadable. A
// wall-clock time ("2026-03-29T09:00", a space for the T too) is read in `zone`, as the job form reads its start;
// one with `Z` or an offset ("2026-03-29T09:00Z", "...+01:00") is that instant.
export function readInstant(text, zone) {
  const value = (text || "").trim().replace(" ", "T");
  if (/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d)?$/.test(value)) return zonedToUtc(value, zone);
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(z|[+-]\d\d:?\d\d)$/i.test(value)) return null;
  const at = new Date(value.toUpperCase());
  return Number.isNaN(at.getTime()) ? null : at.toISOString().replace(/\.\d{3}Z$/, "Z");
}
