// The grading page: one query page at a time, its results shuffled and blind; 0/1/2 per
// result from the keyboard or the buttons, each saved at once; the name is remembered so
// that a grader resumes at the first unfinished page.  Crawl URLs go through safe.js.
"use strict";

const $ = (id) => document.getElementById(id);
let grader = "";
let position = 0;
let total = 0;
let focus = 0;
let loading = 0;  // the latest load's ticket: an earlier answer that arrives late is dropped
let starting = null;  // the current grader's start, under way or done

async function api(path, body) {
  const response = await fetch(path, body === undefined ? {} :
    {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)});
  const payload = await response.json();
  if (!response.ok) throw new Error(payload.error || response.statusText);
  return payload;
}

function showProgress(done) {
  $("progress").textContent = `${grader}: page ${position + 1} of ${total} · ${done} of ${total} finished`;
}

function setFocus(index) {
  const items = [...document.querySelectorAll("#results li")];
  if (!items.length) return;
  focus = Math.max(0, Math.min(items.length - 1, index));
  items.forEach((item, i) => item.classList.toggle("focus", i === focus));
  items[focus].scrollIntoView({block: "nearest"});
}

async function grade(item, value) {
  const id = Number(item.dataset.result);
  await api("/api/grade", {grader, result: id, grade: value});
  for (const button of item.querySelectorAll(".grades button")) {
    button.setAttribute("aria-pressed", String(Number(button.dataset.grade) === value));
  }
  item.dataset.grade = String(value);
  const progress = await api("/api/progress?" + new URLSearchParams({grader}));
  showProgress(progress.done);
}

async function load(index) {
  if (index < 0 || index >= total) return;
  const ticket = ++loading;
  const page = await api(`/api/query/${index}?` + new URLSearchParams({grader}));
  if (ticket !== loading) return;
  position = index;
  const query = $("query");
  query.textContent = page.url;
  if (/^https?:/i.test(page.url)) query.href = page.url; else query.removeAttribute("href");
  const list = $("results");
  list.replaceChildren(...page.results.map((result) => {
    const item = element("li");
    item.dataset.result = String(result.id);
    if (result.grade !== null) item.dataset.grade = String(result.grade);
    const buttons = element("span", null, "grades");
    for (const value of [0, 1, 2]) {
      const button = element("button", value);
      button.type = "button";
      button.dataset.grade = String(value);
      button.setAttribute("aria-pressed", String(result.grade === value));
      button.title = ["unrelated", "somewhat related", "related"][value];
      button.addEventListener("click", () => grade(item, value));
      buttons.append(button);
    }
    item.append(webLink(result.url, null, "url"), buttons);
    item.addEventListener("click", () => setFocus([...list.children].indexOf(item)));
    return item;
  }));
  const firstUngraded = page.results.findIndex((result) => result.grade === null);
  setFocus(firstUngraded < 0 ? 0 : firstUngraded);
  showProgress(page.done);
}

function begin(name) {
  const who = name.trim();
  if (!who) return null;
  if (who === grader && starting) return starting;  // the remembered name entered again
  grader = who;
  localStorage.setItem("relatedpages-grader", grader);
  starting = (async () => {
    const progress = await api("/api/progress?" + new URLSearchParams({grader}));
    total = progress.total;
    $("task").hidden = false;
    await load(progress.next === null ? 0 : progress.next);
  })();
  return starting;
}

document.addEventListener("keydown", async (event) => {
  if (!grader || event.target === $("grader") || event.ctrlKey || event.metaKey || event.altKey) return;
  const items = [...document.querySelectorAll("#results li")];
  if (["0", "1", "2"].includes(event.key) && items.length) {
    event.preventDefault();
    const item = items[focus];  // the focus moves on now: a key pressed before the save ends grades the next
    setFocus(focus + 1);
    await grade(item, Number(event.key));
  } else if (event.key === "ArrowDown" || event.key === "j") { event.preventDefault(); setFocus(focus + 1); }
  else if (event.key === "ArrowUp" || event.key === "k") { event.preventDefault(); setFocus(focus - 1); }
  else if (event.key === "ArrowRight" || event.key === "n") { event.preventDefault(); await load(position + 1); }
  else if (event.key === "ArrowLeft" || event.key === "p") { event.preventDefault(); await load(position - 1); }
});

$("who").addEventListener("submit", (event) => { event.preventDefault(); begin($("grader").value); });
$("next").addEventListener("click", () => load(position + 1));
$("previous").addEventListener("click", () => load(position - 1));
const remembered = localStorage.getItem("relatedpages-grader");
if (remembered) { $("grader").value = remembered; begin(remembered); }
