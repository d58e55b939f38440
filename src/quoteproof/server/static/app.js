/* quoteproof web page: the streamed draft of an answer, quote boxes that open the
 * source, local times, and the source viewer centred on the quoted span.
 *
 * Served from /static (the CSP allows no inline scripts). Model prose is only ever
 * inserted as text (textContent); the HTML inserted here is HTML the server made:
 * verbatim figures of resolved quotes, data results, and the final answer fragment.
 * A quote's text is never changed: a verbatim figure only gets attributes.
 */
(function () {
  "use strict";

  var GENERATED_LABEL = "Generated \u2014 not a quote";

  function element(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function setBusy(busy) {
    var indicator = document.getElementById("ask-busy");
    if (indicator) indicator.classList.toggle("htmx-request", busy);
    var button = document.getElementById("ask-submit");
    if (button) button.disabled = busy;
  }

  var current = null; // the AbortController of the answer being streamed
  var LOST = "The connection to the server was lost before the answer was complete.";

  // Split server-sent events out of the text received so far; return the rest.
  function takeEvents(text, dispatch) {
    var blocks = text.split("\n\n");
    var rest = blocks.pop();
    blocks.forEach(function (block) {
      var name = "message";
      var data = [];
      block.split("\n").forEach(function (line) {
        if (line.indexOf("event:") === 0) name = line.slice(6).trim();
        else if (line.indexOf("data:") === 0) data.push(line.slice(5).replace(/^ /, ""));
      });
      if (data.length) dispatch(name, JSON.parse(data.join("\n")));
    });
    return rest;
  }

  // The question is posted (with the form's token, like every other form) and the
  // answer read as a stream of server-sent events: fetch() and a ReadableStream,
  // never a GET, so no link or image on another page can make the server answer.
  function startStream(form) {
    var answer = document.getElementById("answer");
    if (!answer) return;
    if (current) current.abort();
    var controller = new AbortController();
    current = controller;

    answer.setAttribute("aria-busy", "true");
    answer.textContent = "";
    var draft = element("div", "draft");
    var status = element(
      "p",
      "draft-status",
      "Draft: the answer is being written. Quotes appear once they are read from the source."
    );
    var items = element("div", "draft-items");
    draft.appendChild(status);
    draft.appendChild(items);
    answer.appendChild(draft);
    setBusy(true);

    var prose = null; // the paragraph model text is appended to
    var finished = false;

    function end() {
      finished = true;
      if (current === controller) current = null;
      answer.setAttribute("aria-busy", "false");
      setBusy(false);
    }

    function proseBox() {
      if (prose === null) {
        var section = element("section", "generated draft-prose");
        section.setAttribute("aria-label", GENERATED_LABEL);
        section.appendChild(element("p", "generated-label", GENERATED_LABEL));
        prose = element("p", "prose");
        section.appendChild(prose);
        items.appendChild(section);
      }
      return prose;
    }

    function serverHtml(data) {
      // A verbatim figure or a data result, made by the server's HTML renderer.
      items.insertAdjacentHTML("beforeend", data.html);
      linkQuotes(items);
      prose = null;
    }

    var handlers = {
      stage: function (data) {
        if (data.stage === "retry") {
          items.textContent = "";
          prose = null;
          status.textContent = "Draft: the first reply failed its check; the model is trying again.";
        }
      },
      prose: function (data) {
        // No generated block for whitespace alone: one opens with visible text.
        if (prose === null && data.text.trim() === "") return;
        var piece = document.createElement("span");
        piece.textContent = data.text; // model text: never parsed as HTML
        proseBox().appendChild(piece);
      },
      quote: serverHtml,
      data: serverHtml,
      dropped: function (data) {
        items.appendChild(
          element("p", "draft-dropped", "A quote did not match the source and is not shown (" + data.reason + ").")
        );
        prose = null;
      },
      final: function (data) {
        end();
        answer.innerHTML = data.html; // the checked answer, rendered by the server
        linkQuotes(answer);
      },
      failure: function (data) {
        end();
        showError(answer, data.message);
      },
    };

    function dispatch(name, data) {
      if (!finished && Object.prototype.hasOwnProperty.call(handlers, name)) handlers[name](data);
    }

    fetch("/ask/stream", {
      method: "POST",
      body: new URLSearchParams(new FormData(form)),
      headers: { Accept: "text/event-stream" },
      credentials: "same-origin",
      cache: "no-store",
      signal: controller.signal,
    })
      .then(function (response) {
        if (!response.ok || !response.body) {
          return response.text().then(function (text) {
            var refused = new Error(text || "The server answered " + response.status + ".");
            refused.fromServer = true;
            throw refused;
          });
        }
        var reader = response.body.getReader();
        var decoder = new TextDecoder();
        var received = "";
        function pump() {
          return reader.read().then(function (chunk) {
            received += chunk.done ? decoder.decode() + "\n\n" : decoder.decode(chunk.value, { stream: true });
            received = takeEvents(received, dispatch);
            if (finished) return reader.cancel();
            if (chunk.done) throw new Error(LOST);
            return pump();
          });
        }
        return pump();
      })
      .catch(function (error) {
        if (finished || controller.signal.aborted) return;
        end();
        showError(answer, error.fromServer ? error.message : LOST);
      });
  }

  function showError(answer, message) {
    var box = element("div", "error");
    box.setAttribute("role", "alert");
    box.appendChild(element("strong", "", "Error: "));
    box.appendChild(document.createTextNode(message));
    answer.textContent = "";
    answer.appendChild(box);
  }

  // The ask form posts through htmx, or streams when "show a draft" is ticked. This
  // listener runs first (capture on the document) and keeps htmx from posting.
  document.addEventListener(
    "submit",
    function (event) {
      var form = event.target;
      if (!(form instanceof HTMLFormElement) || form.id !== "ask-form") return;
      var stream = document.getElementById("stream");
      var streams = typeof window.fetch === "function" && typeof window.ReadableStream === "function";
      if (!stream || !stream.checked || !streams) return;
      event.preventDefault();
      event.stopPropagation();
      if (!form.reportValidity()) return;
      startStream(form);
    },
    true
  );

  // Ctrl+Enter (or Cmd+Enter) in the question box submits the form.
  document.addEventListener("keydown", function (event) {
    var target = event.target;
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && target && target.id === "question") {
      event.preventDefault();
      target.form.requestSubmit();
    }
  });

  // A verbatim figure's text opens the source at the quote, as its "Open in source"
  // link does: a click anywhere on the figure (except on a link, or one that ends a
  // drag selecting text), or Enter on the text, which is a link in the tab order. The
  // text's characters stay exactly the source's: only attributes are added.
  function sourceLink(node) {
    var figure = node.closest ? node.closest("figure.verbatim") : null;
    return figure ? figure.querySelector("a.source-link[href]") : null;
  }

  function linkQuotes(root) {
    if (!root || !root.querySelectorAll) return;
    root.querySelectorAll("figure.verbatim blockquote.quote-text").forEach(function (text) {
      if (text.hasAttribute("role") || !sourceLink(text)) return;
      text.setAttribute("role", "link");
      text.setAttribute("tabindex", "0");
      text.setAttribute("title", "Open the source at this passage");
    });
  }

  function openSource(link, event) {
    link.dispatchEvent(
      new MouseEvent("click", {
        bubbles: true,
        cancelable: true,
        ctrlKey: event.ctrlKey,
        metaKey: event.metaKey,
        shiftKey: event.shiftKey,
        altKey: event.altKey,
      })
    );
  }

  var pressedAt = null; // where the mouse button went down: a click that ends a drag selects text
  document.addEventListener(
    "mousedown",
    function (event) {
      pressedAt = { x: event.clientX, y: event.clientY };
    },
    true
  );

  document.addEventListener("click", function (event) {
    var target = event.target;
    if (event.defaultPrevented || event.button !== 0 || !(target instanceof Element)) return;
    if (target.closest("a, button, input, select, textarea, summary")) return;
    var figure = target.closest("figure.verbatim");
    var link = figure && figure.querySelector("blockquote.quote-text[role='link']") && sourceLink(figure);
    if (!link) return;
    var dragged = pressedAt && Math.abs(event.clientX - pressedAt.x) + Math.abs(event.clientY - pressedAt.y) > 4;
    if (dragged) return;
    openSource(link, event);
  });

  document.addEventListener("keydown", function (event) {
    var target = event.target;
    if (event.key !== "Enter" || !(target instanceof Element)) return;
    if (!target.matches("figure.verbatim blockquote.quote-text[role='link']")) return;
    var link = sourceLink(target);
    if (!link) return;
    event.preventDefault();
    openSource(link, event);
  });

  document.addEventListener("htmx:load", function (event) {
    linkQuotes(event.target);
  });

  // Times (history, recorded answers): the server writes UTC; the reader sees the
  // time in their own time zone, "24 Nov 2026, 14:03", and how long ago it was.
  var MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

  function twoDigits(number) {
    return (number < 10 ? "0" : "") + number;
  }

  function localText(date) {
    return (
      date.getDate() + " " + MONTHS[date.getMonth()] + " " + date.getFullYear() + ", " +
      twoDigits(date.getHours()) + ":" + twoDigits(date.getMinutes())
    );
  }

  function agoText(date, now) {
    var minutes = Math.floor((now - date.getTime()) / 60000);
    if (minutes < 1) return "just now";
    if (minutes < 60) return minutes + " min ago";
    var hours = Math.floor(minutes / 60);
    if (hours < 24) return hours + " h ago";
    var days = Math.floor(hours / 24);
    if (days === 1) return "yesterday";
    return days < 30 ? days + " days ago" : "";
  }

  function showLocalTimes() {
    var now = Date.now();
    document.querySelectorAll("time.local-time[datetime]").forEach(function (node) {
      var date = new Date(node.getAttribute("datetime"));
      if (isNaN(date.getTime())) return;
      node.textContent = localText(date);
      var ago = node.nextElementSibling;
      if (!ago || !ago.classList.contains("time-ago")) {
        ago = element("span", "time-ago");
        node.insertAdjacentElement("afterend", ago);
      }
      ago.textContent = agoText(date, now);
    });
  }

  // The source viewer: bring the quoted span into view, centred, and give it focus.
  function focusQuote() {
    var quote = document.getElementById("quote");
    if (!quote) return;
    quote.focus({ preventScroll: true });
    // On a PDF page, centre the first highlighted line rather than the whole page.
    var target = quote.querySelector("rect.highlight") || quote;
    target.scrollIntoView({ block: "center" });
  }

  // Until the page has loaded, the browser keeps scrolling the #quote element to the
  // top of the window (images and fonts change the layout): centre it again once
  // loaded, unless the reader has scrolled meanwhile.
  var readerScrolled = false;
  ["wheel", "touchmove", "keydown", "mousedown"].forEach(function (name) {
    window.addEventListener(name, function () { readerScrolled = true; }, { passive: true, once: true });
  });

  function centreWhenLoaded() {
    function again() {
      requestAnimationFrame(function () {
        if (!readerScrolled) focusQuote();
      });
    }
    if (document.readyState === "complete") again();
    else window.addEventListener("load", again, { once: true });
  }

  function ready() {
    linkQuotes(document.body);
    showLocalTimes();
    if (document.querySelector("time.local-time")) window.setInterval(showLocalTimes, 60000);
    if (document.body.classList.contains("source-page")) {
      focusQuote();
      centreWhenLoaded();
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", ready);
  } else {
    ready();
  }
  window.addEventListener("hashchange", function () {
    if (window.location.hash === "#quote") focusQuote();
  });
})();
