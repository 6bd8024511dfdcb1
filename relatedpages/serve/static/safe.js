// Crawl text in the page, safely: the one home of the rule every page of the project keeps.
// Anchors and URLs from a crawl are hostile: they are only ever set as text, and only an
// http(s) URL becomes a link's href (javascript:, data: and the rest stay red text).
"use strict";

function element(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

function webLink(url, text, className) {
  let safe = false;
  try { safe = ["http:", "https:"].includes(new URL(url).protocol); } catch (error) { safe = false; }
  if (!safe) return element("span", text || url, (className ? className + " " : "") + "unsafe");
  const link = element("a", text || url, className);
  link.href = url;
  link.rel = "noopener noreferrer nofollow";
  link.target = "_blank";
  return link;
}
