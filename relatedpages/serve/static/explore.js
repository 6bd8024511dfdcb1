// The explorer: look a page up in every algorithm the server answers with, side by side,
// with each result's evidence one click away; follow a result to explore it in turn.
// Everything from a crawl (URLs, anchors) is hostile: element() and webLink() of safe.js
// set it as text, or (http(s) only) as a link's href; never parsed as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
let databases = [];  // algorithms answered from a related-pages database
let linkMethods = [];  // algorithms answered from the link index

function evidenceItem(algorithm, item) {
  const li = element("li");
  if (linkMethods.includes(algorithm)) {  // [relation, page, anchor text]
    const [relation, page, text] = item;
    const said = {parent: "via", link: "linked from", child: "both link",
                  // simrank: a parent of each page, and where their reverse walks meet
                  "query-parent": "the query is linked from", "result-parent": "this page is linked from",
                  ancestor: "both reached from"}[relation] || relation;
    li.append(element("span", said + " "), webLink(page));
    if (text) li.append(" ", element("span", "«" + text + "»", "anchor"));
  } else {  // [citing site, similarity, citing page?, anchor text?]
    const [site, weight, page, text] = item;
    li.append(element("strong", site), element("span", " (" + Number(weight).toFixed(3) + ")"));
    if (page) li.append(" via ", webLink(page));
    if (text) li.append(" ", element("span", "«" + text + "»", "anchor"));
  }
  return li;
}

function resultItem(algorithm, result) {
  const li = element("li");
  li.append(element("span", Number(result.score).toFixed(3), "score"), webLink(result.url));
  if (result.fallback) li.append(element("span", "(by " + result.fallback + ")", "fallback"));
  if (result.via) li.append(element("span", "from ", "fallback"), webLink(result.via));
  const explore = element("button", "explore", "explore");
  explore.type = "button";
  explore.title = "related pages of this one";
  explore.addEventListener("click", () => lookUp(result.url, true));
  li.append(explore);
  if (result.evidence && result.evidence.length) {
    const details = element("details");
    details.append(element("summary", "why (" + result.evidence.length + ")"));
    const list = element("ul");
    for (const item of result.evidence) list.append(evidenceItem(algorithm, item));
    details.append(list);
    li.append(details);
  }
  return li;
}

function column(algorithm, answer) {
  const section = element("section", null, "column");
  section.dataset.algorithm = algorithm;
  section.append(element("h2", algorithm));
  if (answer.error) {
    section.append(element("p", answer.error, "note"));
    return section;
  }
  if (!answer.found) {
    section.append(element("p", "not in " + (linkMethods.includes(algorithm) ? "the link index" : "this database")
                                + (answer.reason ? " (" + answer.reason + ")" : ""), "note"));
    return section;
  }
  if (answer.matched && answer.matched !== answer.url) {
    section.append(element("p", "found as " + answer.matched, "note"));
  }
  if (!answer.related.length) section.append(element("p", "no related pages", "note"));
  const list = element("ol", null, "results");
  for (const result of answer.related) list.append(resultItem(algorithm, result));
  section.append(list);
  return section;
}

function chosen() {
  return [...document.querySelectorAll("#algorithms input:checked")].map((box) => box.value);
}

async function lookUp(url, remember) {
  url = url.trim();
  if (!url) return;
  $("url").value = url;
  if (remember) {
    const address = new URL(window.location.href);
    address.searchParams.set("url", url);
    history.pushState({url}, "", address);
  }
  $("status").textContent = "looking up …";
  const answers = await Promise.all(chosen().map(async (algorithm) => {
    const query = new URLSearchParams({url, algorithm});
    try {
      const response = await fetch("/api/related?" + query.toString(), {headers: {Accept: "application/json"}});
      return [algorithm, await response.json()];
    } catch (error) {
      return [algorithm, {error: "no answer: " + error}];
    }
  }));
  $("columns").replaceChildren(...answers.map(([algorithm, answer]) => column(algorithm, answer)));
  const found = answers.filter(([, answer]) => answer.found).length;
  $("status").textContent = found + " of " + answers.length + " algorithms know " + url;
}

async function start() {
  const health = await (await fetch("/api/health")).json();
  databases = Object.keys(health.databases || {});
  linkMethods = health.links ? health.links.algorithms : [];
  for (const algorithm of [...databases, ...linkMethods]) {
    const label = element("label");
    const box = element("input");
    box.type = "checkbox";
    box.value = algorithm;
    box.checked = true;
    box.addEventListener("change", () => lookUp($("url").value, false));
    label.append(box, " " + algorithm);
    $("algorithms").append(label);
  }
  $("lookup").addEventListener("submit", (event) => {
    event.preventDefault();
    lookUp($("url").value, true);
  });
  window.addEventListener("popstate", () => {
    const url = new URL(window.location.href).searchParams.get("url");
    if (url) lookUp(url, false);
  });
  const given = new URL(window.location.href).searchParams.get("url");
  if (given) lookUp(given, false);
  else $("status").textContent = "type or paste a page's URL";
}

start();
