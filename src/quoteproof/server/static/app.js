/* quoteproof web page: the streamed draft of an answer and focus on a quoted span.
 *
 * Served from /static (the CSP allows no inline scripts). Model prose is only ever
 * inserted as text (textContent); the HTML inserted here is HTML the server made:
 * verbatim figures of resolved quotes, data results, and the final answer fragment.
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

  // The source viewer: bring the quoted span into view and give it focus.
  function focusQuote() {
    var quote = document.getElementById("quote");
    if (!quote) return;
    quote.focus({ preventScroll: true });
    // On a PDF page, centre the first highlighted line rather than the whole page.
    var target = quote.querySelector("rect.highlight") || quote;
    target.scrollIntoView({ block: "center" });
  }

  function ready() {
    if (document.body.classList.contains("source-page")) focusQuote();
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
