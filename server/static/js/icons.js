// Small icons drawn in inline SVG, so they never depend on a font the device may not have
// (a ⏱ or a ✓ shows as an empty box where no font holds it). Each is decorative
// (aria-hidden): the words next to it say what it means.

const NS = "http://www.w3.org/2000/svg";

const SHAPES = {
  // A stopwatch: the dial, the crown and one hand.
  clock: ["M12 21a8 8 0 1 0 0-16 8 8 0 0 0 0 16z", "M12 9v4l2.5 2", "M10 2h4", "M12 2v3"],
  // A computer: the screen with its stand (marks every seat the server's computer plays).
  computer: ["M4 5h16v11H4z", "M9 20h6", "M12 16v4", "M8 9.5h.01", "M16 9.5h.01", "M9 12.5h6"],
  // A person walking away (a seat whose player is away).
  away: ["M13 4.5a1.5 1.5 0 1 0 0-.01", "M11 21l2-6-3-3 1-4 3 3h3", "M9 12l-2 3"],
};

/**
 * An icon: `name` one of clock, computer, away. Returns an <svg> element (1em square,
 * drawn with currentColor, hidden from assistive technology).
 */
export function icon(name, extraClass = "") {
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("focusable", "false");
  svg.setAttribute("class", `icon icon-${name}${extraClass ? ` ${extraClass}` : ""}`);
  svg.setAttribute("data-icon", name);
  for (const d of SHAPES[name] || []) {
    const path = document.createElementNS(NS, "path");
    path.setAttribute("d", d);
    svg.appendChild(path);
  }
  return svg;
}
