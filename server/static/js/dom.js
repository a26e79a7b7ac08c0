// A tiny DOM builder: h("button", {class: "x", onclick: fn}, "text", child, [more]).
// Attributes starting with "on" become listeners; false/null/undefined attributes and
// children are skipped; `dataset`-style keys are written as given ("data-card").

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === false || value === null || value === undefined) continue;
    if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2), value);
    } else if (key === "class") {
      el.className = Array.isArray(value) ? value.filter(Boolean).join(" ") : value;
    } else if (key === "value") {
      el.value = value;
    } else if (key === "checked" || key === "disabled" || key === "selected") {
      el[key] = Boolean(value);
      if (key === "disabled") el.setAttribute("disabled", "");
    } else {
      el.setAttribute(key, value === true ? "" : String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else if (child instanceof Node) el.appendChild(child); // also SVG elements
    else el.appendChild(document.createTextNode(String(child)));
  }
}

/** Where the caret or the selection is in a text field (null: not a text field). */
function textSelection(el) {
  if (!el || !["INPUT", "TEXTAREA"].includes(el.nodeName)) return null;
  try {
    if (typeof el.selectionStart !== "number") return null; // a type without a caret
    return { value: el.value, start: el.selectionStart, end: el.selectionEnd, direction: el.selectionDirection };
  } catch {
    return null;
  }
}

/**
 * Replace the children of `root` with `children`, keeping keyboard focus: the element
 * focused before (matched by its `data-key`) is focused again afterwards, and text inputs
 * keep what was typed (matched by `data-key` too). Whole re-renders stay keyboard-friendly.
 * The focused text field keeps its caret and selection too: a redraw between selecting
 * a name and typing over it (the lobby reads the room every few seconds) must not turn
 * "Du" typed over "ANNA" into "ANNADu".
 */
export function replaceKeepingFocus(root, children) {
  const active = document.activeElement;
  const focusKey = active && root.contains(active) ? active.getAttribute("data-key") : null;
  const selection = focusKey ? textSelection(active) : null;
  const typed = {};
  for (const input of root.querySelectorAll("input[data-key]:not([type=checkbox]):not([type=radio])")) {
    typed[input.getAttribute("data-key")] = input.value;
  }
  root.replaceChildren(...[children].flat().filter(Boolean));
  for (const input of root.querySelectorAll("input[data-key]:not([type=checkbox]):not([type=radio])")) {
    const key = input.getAttribute("data-key");
    if (key in typed && input.getAttribute("data-keep") !== "no") input.value = typed[key];
  }
  if (focusKey) {
    const again = root.querySelector(`[data-key="${CSS.escape(focusKey)}"]`);
    if (again && !again.disabled) {
      again.focus({ preventScroll: true });
      if (selection && again !== active && textSelection(again)?.value === selection.value) {
        try {
          again.setSelectionRange(selection.start, selection.end, selection.direction);
        } catch {
          /* a field that takes no selection: the caret stays where focus put it */
        }
      }
    } else {
      // The focused control went away (e.g. the card just played): keep focus in the
      // same region so keyboard users are not thrown back to the top of the page.
      const region = active.closest?.("[data-focus-region]")?.getAttribute("data-focus-region");
      const area = region && root.querySelector(`[data-focus-region="${CSS.escape(region)}"]`);
      const fallback = area && (area.querySelector("button:not([disabled])") || area);
      if (fallback) fallback.focus({ preventScroll: true });
    }
  }
}
