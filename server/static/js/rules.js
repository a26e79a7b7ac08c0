// The rules, one short page per game: the standard game and the variants Back-up 10,
// Lowball and Muggins, in the page's language (the words are in the catalogues, written
// from the variant pages in Danish, Swedish and English). /rules/<variant>.
import { h, replaceKeepingFocus } from "./dom.js";
import { onLanguageChange, t } from "./i18n.js";
import { topBar } from "./layout.js";

export const VARIANTS = ["standard", "backup10", "lowball", "muggins"];

export function rulesPage(root, variant) {
  if (!VARIANTS.includes(variant)) {
    missingRulesPage(root);
    return;
  }
  const current = variant;
  function render() {
    document.title = `${t(`rules.${current}.title`)} — ${t("title.page")}`;
    replaceKeepingFocus(root, h("div", {}, topBar(),
      h("main", { class: "rules-page", id: "rules", "data-variant": current },
        h("nav", { class: "rules-nav", "aria-label": t("rules.nav") },
          h("ul", {}, VARIANTS.map((v) => h("li", {},
            h("a", { href: `/rules/${v}`, "aria-current": v === current ? "page" : null }, t(`rules.${v}.title`)))))),
        h("article", { class: "panel rules-text" },
          h("h1", {}, t(`rules.${current}.title`)),
          h("p", { class: "lede" }, t(`rules.${current}.lede`)),
          t(`rules.${current}.sections`).map((section) => {
            // A section is "## Heading" followed by its paragraphs, one per line.
            const [head, ...paras] = section.split("\n");
            return h("section", {},
              h("h2", {}, head.replace(/^##\s*/, "")),
              paras.map((p) => (p.startsWith("- ") ? h("p", { class: "rule-item" }, p.slice(2)) : h("p", {}, p))));
          })),
        h("p", {}, h("a", { href: "/" }, t("rules.start"))))));
  }
  onLanguageChange(render);
  render();
}

/** /rules/<anything else>: the server answers 404, and the page says so in the reader's
 * language, with a link to every rules page there is. */
function missingRulesPage(root) {
  function render() {
    document.title = `${t("rules.missing_title")} — ${t("title.page")}`;
    replaceKeepingFocus(root, h("div", {}, topBar(),
      h("main", { class: "rules-page", id: "rules", "data-variant": "missing" },
        h("article", { class: "panel rules-text" },
          h("h1", {}, t("rules.missing_title")),
          h("p", {}, t("rules.missing_text")),
          h("ul", { class: "rules-list" }, VARIANTS.map((v) => h("li", {},
            h("a", { href: `/rules/${v}` }, t(`rules.${v}.title`)))))),
        h("p", {}, h("a", { href: "/" }, t("rules.start"))))));
  }
  onLanguageChange(render);
  render();
}
