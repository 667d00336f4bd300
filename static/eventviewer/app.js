// eventviewer: keyboard navigation, in-place focus, copy controls and the diagram's zoom.
// Everything else is plain links and htmx attributes; this file only adds conveniences,
// and every control it handles is also a real link or form that works without it.
(function () {
  "use strict";

  var current = null; // the focused event card, or null: start from the card in view
  var afterEarlier = null; // a k press waiting for earlier turns to arrive

  function eventElements() {
    return Array.prototype.slice.call(document.querySelectorAll("#workspace [data-event]"));
  }

  function byEventId(id) {
    return document.getElementById("event-" + id);
  }

  // The top of the visible reading area: below the sticky top bar and branch bar.
  function readingTop() {
    var top = 0;
    document.querySelectorAll(".topbar, .branch-bar").forEach(function (el) {
      if (getComputedStyle(el).position === "sticky") top = Math.max(top, el.getBoundingClientRect().bottom);
    });
    return top;
  }

  function isInView(el) {
    var rect = el.getBoundingClientRect();
    return rect.bottom > readingTop() && rect.top < window.innerHeight;
  }

  // What the sticky bars cover when stuck, measured: the branch bar sticks below the top bar,
  // and html's scroll-padding-top (so every fragment, scrollIntoView and focus) keeps below both.
  // Their heights change (a wrapped top bar, an open problem list), so they are measured again.
  function stuckHeight(el) {
    return el && getComputedStyle(el).position === "sticky" ? el.getBoundingClientRect().height : 0;
  }

  function measureBars() {
    var style = document.documentElement.style;
    var topbar = stuckHeight(document.querySelector(".topbar"));
    style.setProperty("--topbar-height", topbar + "px");
    style.setProperty("--reading-top", topbar + stuckHeight(document.querySelector(".branch-bar")) + "px");
  }

  var barWatcher = window.ResizeObserver ? new ResizeObserver(measureBars) : null;

  function watchBars() {
    measureBars();
    if (!barWatcher) return;
    barWatcher.disconnect();
    document.querySelectorAll(".topbar, .branch-bar").forEach(function (el) { barWatcher.observe(el); });
  }

  function focusEvent(el, url) {
    if (!el) return false;
    document.querySelectorAll("[data-event].focused").forEach(function (e) { e.classList.remove("focused"); });
    el.classList.add("focused");
    if (!el.hasAttribute("tabindex")) el.setAttribute("tabindex", "-1");
    el.focus({ preventScroll: true });
    // Centred in the room below the bars; a card taller than that room shows its head.
    var room = window.innerHeight - (parseFloat(getComputedStyle(document.documentElement).scrollPaddingTop) || 0);
    el.scrollIntoView({ block: el.getBoundingClientRect().height < room ? "center" : "start" });
    current = el;
    if (url) history.replaceState(history.state, "", url);
    return true;
  }

  // Where j and k start: the focused card while it is in view; after scrolling it away,
  // the first card whose top is in view (j goes to it, k to the one before it).
  function startIndex(list, delta) {
    if (current && document.body.contains(current) && isInView(current)) return list.indexOf(current);
    var top = readingTop() - 4;
    for (var i = 0; i < list.length; i++) {
      if (list[i].getBoundingClientRect().top >= top) return delta > 0 ? i - 1 : i;
    }
    return delta > 0 ? list.length - 1 : list.length;
  }

  // The URL that reopens the branch at this card: its own link (?leaf=…&at=…#event-…).
  function hashFor(el) {
    var link = el.querySelector(".event-head a.permalink");
    return link ? new URL(link.getAttribute("href"), window.location.href).href : "#" + el.id;
  }

  function move(delta) {
    var list = eventElements();
    if (!list.length) return;
    var i = startIndex(list, delta) + delta;
    if (i < 0) {
      var earlier = document.querySelector("[data-load-earlier]");
      if (earlier) {
        focusEvent(list[0], hashFor(list[0]));
        afterEarlier = list[0];
        earlier.click();
        return;
      }
      i = 0;
    }
    if (i >= list.length) {
      var later = document.querySelector("[data-load-later]");
      if (later) later.click();
      i = list.length - 1;
    }
    focusEvent(list[i], hashFor(list[i]));
  }

  // n/p: every problem and failure (or, with ?problem=, that kind); N/P: pending and
  // mismatched only. Past the loaded turns, the list's link to the next one opens its window.
  var PROBLEM_CODES = ["pending", "mismatched"];

  function wanted(code, strict) {
    var line = document.querySelector("[data-problem-filter]");
    var only = line && line.getAttribute("data-problem-filter");
    if (strict) return PROBLEM_CODES.indexOf(code) >= 0 && (!only || only === code);
    return !!code && (!only || only === code);
  }

  function codeOf(el) {
    if (el.hasAttribute("data-failure")) return el.getAttribute("data-failure");
    return el.classList.contains("problem") ? (el.classList.contains("mismatched") ? "mismatched" : "pending") : "";
  }

  function moveProblem(delta, strict) {
    var list = eventElements();
    var i = startIndex(list, delta);
    for (var j = i + delta; j >= 0 && j < list.length; j += delta) {
      if (wanted(codeOf(list[j]), strict)) return focusEvent(list[j], hashFor(list[j]));
    }
    var where = delta > 0 ? "after" : "before";
    var links = Array.prototype.filter.call(
      document.querySelectorAll("[data-problem-link][data-where='" + where + "']"),
      function (a) { return wanted(a.getAttribute("data-code"), strict); }
    );
    var link = delta > 0 ? links[0] : links[links.length - 1];
    if (link) window.location.href = link.href;
  }

  // ?hl=<words> (a search result's link): the words marked in the cards' text, as text nodes.
  function highlight(root) {
    var hl = new URLSearchParams(window.location.search).get("hl");
    if (!hl) return;
    var escaped = function (w) { return w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"); };
    var words = (hl.toLowerCase().match(/[\p{L}\p{N}]+\*?/gu) || []).map(function (w) {
      var prefix = w.slice(-1) === "*";
      return escaped(prefix ? w.slice(0, -1) : w) + (prefix ? "[\\p{L}\\p{N}]*" : "(?![\\p{L}\\p{N}])");
    });
    // Each symbol beyond ASCII (an emoji) is a word of its own, as the index has it, wherever it stands.
    var signs = (hl.match(/[^\P{S}\x00-\x7f]/gu) || []).map(escaped);
    if (!words.length && !signs.length) return;
    var parts = signs.slice();
    if (words.length) parts.unshift("(?<![\\p{L}\\p{N}])(?:" + words.join("|") + ")");
    var pattern = new RegExp(parts.join("|"), "giu");
    root.querySelectorAll("[data-event]").forEach(function (card) {
      var walker = document.createTreeWalker(card, NodeFilter.SHOW_TEXT);
      var nodes = [];
      while (walker.nextNode()) {
        if (!walker.currentNode.parentElement.closest("mark, script, style, .card-tools")) nodes.push(walker.currentNode);
      }
      nodes.forEach(function (node) {
        var text = node.nodeValue;
        pattern.lastIndex = 0;
        if (!pattern.test(text)) return;
        pattern.lastIndex = 0;
        var fragment = document.createDocumentFragment();
        var last = 0;
        text.replace(pattern, function (match, offset) {
          fragment.appendChild(document.createTextNode(text.slice(last, offset)));
          var mark = document.createElement("mark");
          mark.className = "hit";
          mark.textContent = match;
          fragment.appendChild(mark);
          last = offset + match.length;
          return match;
        });
        fragment.appendChild(document.createTextNode(text.slice(last)));
        node.parentNode.replaceChild(fragment, node);
      });
    });
  }

  // The list's and a run's rows: j/k focus the next or previous row's link, so that Enter opens it.
  function rowElements() {
    return Array.prototype.filter.call(document.querySelectorAll("table.conversations tbody tr"), function (tr) {
      return tr.querySelector("a[href]");
    });
  }

  function moveRow(delta) {
    var list = rowElements();
    var at = document.activeElement && document.activeElement.closest ? document.activeElement.closest("tr") : null;
    var i = list.indexOf(at);
    i = i < 0 ? 0 : Math.max(0, Math.min(list.length - 1, i + delta));
    list.forEach(function (tr) { tr.classList.remove("focused"); });
    list[i].classList.add("focused");
    list[i].querySelector("a[href]").focus({ preventScroll: true });
    list[i].scrollIntoView({ block: "nearest" });
  }

  function copy(text, el) {
    var done = function () {
      if (!el) return;
      el.classList.add("copied");
      setTimeout(function () { el.classList.remove("copied"); }, 1500);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () { window.prompt("Copy this link:", text); });
    } else {
      window.prompt("Copy this link:", text);
    }
  }

  function showKeys() {
    var dialog = document.getElementById("keys");
    if (dialog && !dialog.open) dialog.showModal();
  }

  // The diagram: its text never under MIN_DIAGRAM_TEXT px (the drawing scrolls in its box
  // instead), and the box scrolled to the selected branch's leaf (else HEAD).
  var MIN_DIAGRAM_TEXT = 12;

  function fitDiagram() {
    var box = document.getElementById("diagram");
    var svg = box && box.querySelector("svg");
    if (!svg || !svg.viewBox || !svg.viewBox.baseVal || !svg.viewBox.baseVal.width) return null;
    var text = svg.querySelector("text[font-size]");
    var size = (text && parseFloat(text.getAttribute("font-size"))) || 14;
    svg.style.minWidth = Math.ceil(svg.viewBox.baseVal.width * MIN_DIAGRAM_TEXT / size) + "px";
    return box;
  }

  function showSelectedNode(box) {
    var node = box && (box.querySelector("svg g.node.selected") || box.querySelector("svg g.node.head"));
    if (!node) return;
    var at = node.getBoundingClientRect();
    var view = box.getBoundingClientRect();
    box.scrollLeft += at.left + at.width / 2 - (view.left + box.clientLeft + box.clientWidth / 2);
    box.scrollTop += at.top + at.height / 2 - (view.top + box.clientTop + box.clientHeight / 2);
  }

  // Closed, the key help leaves no focus on its Close button, where the keys would be ignored.
  document.addEventListener("close", function (e) {
    if (e.target.id === "keys" && e.target.contains(document.activeElement)) document.activeElement.blur();
  }, true);
  // c: open the comment form of the focused card (else the first card in view).
  function startComment() {
    var card = current && document.body.contains(current) ? current : null;
    if (!card) {
      var list = eventElements();
      card = list[startIndex(list, 1) + 1];
    }
    var form = card && card.querySelector("[data-comment-form]");
    if (!form) return false;
    form.open = true;
    var box = form.querySelector("textarea");
    if (box) box.focus();
    return true;
  }

  // A share link's reviewer types their name once: kept in this browser, filled into every form.
  var NAME_KEY = "eventviewer.reviewer-name";
  function fillNames(root) {
    var name = "";
    try { name = window.localStorage.getItem(NAME_KEY) || ""; } catch (err) { return; }
    (root || document).querySelectorAll("[data-reviewer-name]").forEach(function (input) {
      if (!input.value) input.value = name;
    });
  }
  document.addEventListener("change", function (e) {
    if (!e.target.matches || !e.target.matches("[data-reviewer-name]")) return;
    try { window.localStorage.setItem(NAME_KEY, e.target.value.trim()); } catch (err) { return; }
    fillNames();
  });
  document.addEventListener("DOMContentLoaded", function () { fillNames(); });
  document.addEventListener("htmx:load", function (e) { fillNames(e.detail && e.detail.elt && e.detail.elt.querySelectorAll ? e.detail.elt : document); });

  // ] and [: the review queue's next and previous conversation (its links, hx-boost).
  function follow(selector) {
    var link = document.querySelector(selector);
    if (!link) return false;
    link.click();
    return true;
  }

  function hrefOf(el) {
    return el.getAttribute("href") || el.getAttribute("xlink:href");
  }

  document.addEventListener("keydown", function (e) {
    if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey) return;
    var target = e.target;
    // Just after the key help closes, focus can still sit on its Close button: not a control then.
    var closed = target && target.closest && target.closest("dialog:not([open])");
    if (!closed && target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT|BUTTON)$/.test(target.tagName))) return;
    var onRows = !eventElements().length && rowElements().length;
    switch (e.key) {
      case "j": if (onRows) moveRow(1); else move(1); break;
      case "k": if (onRows) moveRow(-1); else move(-1); break;
      case "n": moveProblem(1, false); break;
      case "p": moveProblem(-1, false); break;
      case "N": moveProblem(1, true); break;
      case "P": moveProblem(-1, true); break;
      case "/":
        var box = document.querySelector("[data-search-box]");
        if (!box) return;
        box.focus();
        box.select();
        break;
      case "?": showKeys(); break;
      case "c": if (!startComment()) return; break;
      case "]": if (!follow("[data-queue-next]")) return; break;
      case "[": if (!follow("[data-queue-previous]")) return; break;
      default: return;
    }
    e.preventDefault();
  });

  // Scrolling the focused card out of view hands j/k back to the card in view.
  window.addEventListener("scroll", function () {
    if (current && !isInView(current)) current = null;
  }, { passive: true });

  document.addEventListener("click", function (e) {
    if (e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return;
    var el = e.target.closest("[data-copy], [data-anchor], [data-show-keys], [data-zoom-diagram], [data-share-event], [data-full-output]");
    if (!el) return;
    if (el.hasAttribute("data-show-keys")) {
      showKeys();
    } else if (el.hasAttribute("data-copy")) {
      copy(new URL(el.getAttribute("data-copy"), window.location.href).href, el);
    } else if (el.hasAttribute("data-zoom-diagram")) {
      var diagram = document.getElementById("diagram");
      var zoomed = diagram.classList.toggle("zoomed");
      el.setAttribute("aria-pressed", zoomed ? "true" : "false");
      showSelectedNode(diagram);
    } else if (el.hasAttribute("data-share-event")) {
      var focus = document.querySelector("#share [data-focus-input]");
      if (!focus) return;
      e.preventDefault();
      focus.value = el.getAttribute("data-share-event");
      var note = document.querySelector("#share input[name=note]");
      document.getElementById("share").scrollIntoView({ block: "nearest" });
      (note || focus).focus();
    } else if (el.hasAttribute("data-full-output")) {
      e.preventDefault();
      var card = el.closest("[data-event]");
      var pre = card && card.querySelector("pre.output");
      if (!pre || !window.htmx) { window.location.href = hrefOf(el); return; }
      window.htmx.ajax("GET", hrefOf(el), { target: pre, swap: "outerHTML", select: "pre.output" }).then(function () {
        el.closest(".truncated").remove();
      });
    } else if (el.hasAttribute("data-anchor")) {
      var anchored = byEventId(el.getAttribute("data-anchor"));
      if (anchored) {
        e.preventDefault();
        focusEvent(anchored, new URL(hrefOf(el), window.location.href).href);
      }
    }
  });

  // The event named by the URL's #event-<id>, else the one the page was opened at
  // (?at=<id> without a fragment, or a share link's focus event). Coming back to such a URL
  // shows that event again, not the place scrolled to before leaving: the browser's own
  // restoring of the scroll is off for it, and a page back from the back/forward cache refocuses.
  function focusFromHash() {
    var named = namedEvent();
    if (!named) return;
    if ("scrollRestoration" in history) history.scrollRestoration = "manual";
    focusEvent(named, null);
  }

  function namedEvent() {
    var hash = window.location.hash.slice(1);
    try {
      hash = decodeURIComponent(hash);
    } catch (e) {
      // an id with a lone "%": use the fragment as it is
    }
    if (hash.indexOf("event-") === 0) return document.getElementById(hash);
    var workspace = document.getElementById("workspace");
    var at = workspace && workspace.getAttribute("data-at");
    return at ? byEventId(at) : null;
  }

  // A block that scrolls (long output, wide arguments) can be reached and scrolled with the keyboard.
  function markScrollable(root) {
    root.querySelectorAll("pre:not([tabindex])").forEach(function (pre) {
      if (pre.scrollHeight > pre.clientHeight + 1 || pre.scrollWidth > pre.clientWidth + 1) pre.setAttribute("tabindex", "0");
    });
  }

  document.addEventListener("toggle", function (e) { markScrollable(e.target); }, true);
  document.addEventListener("DOMContentLoaded", function () {
    showSelectedNode(fitDiagram());
    watchBars();
    markScrollable(document);
    highlight(document);
    focusFromHash();
  });
  window.addEventListener("pageshow", function (e) {
    if (e.persisted) focusFromHash();
  });
  // The list's search box asks as it is typed into: a half-typed query ("unclosed) is then no
  // error (the server answers 204). Pressing Enter asks for real: a query the server refuses
  // comes back 400 with its reason, which is shown, and its URL kept in the address bar.
  document.addEventListener("htmx:configRequest", function (e) {
    var how = e.detail.triggeringEvent;
    if (e.detail.elt.hasAttribute("data-live-search") && how && how.type !== "submit") {
      e.detail.headers["X-Eventviewer-Typing"] = "1";
    }
  });
  document.addEventListener("htmx:beforeSwap", function (e) {
    var asking = e.detail.requestConfig && e.detail.requestConfig.elt;
    if (e.detail.xhr.status === 400 && asking && asking.hasAttribute("data-live-search")) {
      e.detail.shouldSwap = true;
      e.detail.isError = false;
    }
  });
  document.addEventListener("eventviewer:redrawn", watchBars);
  window.addEventListener("resize", function () { measureBars(); fitDiagram(); }, { passive: true });
  document.addEventListener("htmx:afterSettle", function (e) {
    fitDiagram(); // a diagram redrawn (live) is fitted again
    markScrollable(document);
    if (e.target) highlight(e.target);
    // The workspace redrawn, or the whole page (a review queue's next conversation, hx-boost).
    if (e.target && (e.target.id === "workspace" || e.target === document.body)) {
      showSelectedNode(fitDiagram());
      watchBars();
      current = null;
      focusFromHash();
    } else if (afterEarlier) {
      // k at the top loaded earlier turns: go on to the event just before the one focused.
      var list = eventElements();
      var i = list.indexOf(afterEarlier);
      afterEarlier = null;
      if (i > 0) focusEvent(list[i - 1], hashFor(list[i - 1]));
      else if (current) current.scrollIntoView({ block: "center" });
    }
  });
})();

// --- Live: a conversation still being written (templates/conversations/_live.html) ------
// #live asks the server every few seconds what changed. This section tells it what the
// page shows, then merges the turns it sends: turns drawn again replace theirs in place,
// new ones go at the end after an "N new events" marker; the counts are redrawn. Nothing
// here scrolls: a reader scrolled up stays where they are.
(function () {
  "use strict";

  var QUEUE = ["queue", "reviewed", "blind"]; // a review queue's parameters: redrawn links keep them

  document.addEventListener("htmx:configRequest", function (e) {
    if (!e.detail.elt || e.detail.elt.id !== "live") return;
    var params = e.detail.parameters;
    var query = new URLSearchParams(window.location.search);
    if (query.get("leaf")) params.leaf = query.get("leaf");
    if (query.get("view")) params.view = query.get("view"); // the links of the turns it sends keep it
    QUEUE.forEach(function (name) { if (query.get(name)) params[name] = query.get(name); });
    var workspace = document.getElementById("workspace");
    if (workspace && workspace.getAttribute("data-leaf")) params.shown = workspace.getAttribute("data-leaf");
    var drawn = document.querySelectorAll("#turns [data-turn]");
    // Only a page showing the branch's end takes new turns; otherwise "Load later" has them.
    if (drawn.length && !document.querySelector("[data-load-later]")) {
      params.turn = drawn[drawn.length - 1].getAttribute("data-turn");
    }
  });

  function below(el) {
    return el.getBoundingClientRect().top > window.innerHeight;
  }

  function mark(turns, before, count) {
    var marker = document.getElementById("live-marker");
    if (marker && below(marker)) {
      // Not seen yet: it keeps its place and counts these too.
      count += parseInt(marker.getAttribute("data-count"), 10) || 0;
    } else {
      if (marker) marker.remove();
      marker = document.createElement("div");
      marker.id = "live-marker";
      marker.className = "live-marker";
      turns.insertBefore(marker, before);
    }
    marker.setAttribute("data-count", String(count));
    marker.textContent = count + " new event" + (count === 1 ? "" : "s");
  }

  function merge(template) {
    var turns = document.getElementById("turns");
    if (!turns) return;
    var firstNew = template.getAttribute("data-first-new");
    var count = parseInt(template.getAttribute("data-new"), 10) || 0;
    var end = turns.querySelector(".more.later");
    var markAt = null;
    Array.prototype.slice.call(template.content.children).forEach(function (turn) {
      var index = turn.getAttribute("data-turn");
      var old = turns.querySelector("[data-turn='" + index + "']");
      if (old) {
        old.replaceWith(turn);
      } else {
        turns.insertBefore(turn, end);
      }
      if (index === firstNew) markAt = turn;
    });
    if (markAt && count) mark(turns, markAt, count);
    var workspace = document.getElementById("workspace");
    if (workspace) workspace.setAttribute("data-leaf", template.getAttribute("data-leaf"));
    if (window.htmx) window.htmx.process(turns);
  }

  // A part of the page being written in (a comment, a verdict's note) is left as it is.
  function busy(el) {
    var active = document.activeElement;
    if (active && el.contains(active) && /^(INPUT|TEXTAREA|SELECT)$/.test(active.tagName)) return true;
    return Array.prototype.some.call(el.querySelectorAll("textarea, input[name=note]"), function (box) {
      return box.value !== box.defaultValue;
    });
  }

  // The comment threads the server sent replace those on the cards (a comment by someone else).
  function mergeComments(template) {
    Array.prototype.slice.call(template.content.children).forEach(function (block) {
      var mine = block.id && document.getElementById(block.id);
      if (!mine || busy(mine)) return;
      mine.replaceWith(block);
      if (window.htmx) window.htmx.process(block);
    });
  }

  // Parts of the page holding counts, redrawn from a fresh copy of the page for the branch it shows.
  var COUNTS = [".conv-head .meta", ".branch-bar", ".branch-more", ".branch-list"];

  function redrawCounts() {
    var workspace = document.getElementById("workspace");
    var leaf = workspace && workspace.getAttribute("data-leaf");
    var query = new URLSearchParams();
    if (leaf) query.set("leaf", leaf);
    var view = new URLSearchParams(window.location.search).get("view");
    if (view) query.set("view", view); // the redrawn links keep the page's view
    var here = new URLSearchParams(window.location.search);
    QUEUE.forEach(function (name) { if (here.get(name)) query.set(name, here.get(name)); });
    var url = window.location.pathname + (query.toString() ? "?" + query.toString() : "");
    fetch(url, { credentials: "same-origin" }).then(function (response) {
      return response.ok ? response.text() : "";
    }).then(function (html) {
      if (!html) return;
      var fresh = new DOMParser().parseFromString(html, "text/html");
      COUNTS.forEach(function (selector) {
        var mine = document.querySelector(selector);
        var theirs = fresh.querySelector(selector);
        if (!mine || !theirs || busy(mine)) return;
        theirs = document.importNode(theirs, true);
        mine.querySelectorAll("details[id][open]").forEach(function (open) { // an open panel stays open
          var same = theirs.querySelector("details#" + open.id);
          if (same) same.open = true;
        });
        mine.replaceWith(theirs);
        if (window.htmx) window.htmx.process(theirs);
      });
      document.dispatchEvent(new CustomEvent("eventviewer:redrawn"));
    });
  }

  // The page is gone under the reader: a share link revoked or expired (410), a conversation
  // deleted (404). Asking again every few seconds would only fail again, so #live is replaced
  // by a notice that asks nothing more; what is on screen stays readable.
  var ENDED = {
    410: "This share link was revoked or has expired: reloading will show nothing more.",
    404: "This conversation no longer exists here: reloading will show nothing more."
  };
  document.addEventListener("htmx:beforeSwap", function (e) {
    var asking = e.detail.requestConfig && e.detail.requestConfig.elt;
    var text = ENDED[e.detail.xhr.status];
    if (!asking || asking.id !== "live" || !text) return;
    var notice = document.createElement("div");
    notice.id = "live";
    notice.className = "live ended";
    notice.setAttribute("role", "status");
    notice.textContent = text;
    e.detail.shouldSwap = true;
    e.detail.isError = false;
    e.detail.serverResponse = notice.outerHTML;
  });

  document.addEventListener("htmx:load", function (e) {
    var live = e.detail && e.detail.elt;
    if (!live || live.id !== "live") return;
    var template = live.querySelector("template[data-live-turns]");
    if (template) {
      merge(template);
      template.remove();
    }
    var comments = live.querySelector("template[data-live-comments]");
    if (comments) {
      mergeComments(comments);
      comments.remove();
    }
    redrawCounts();
  });
})();
