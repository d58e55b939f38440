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

  var current = null; // the EventSource of the answer being streamed

  function startStream(form) {
    var question = form.elements.namedItem("question").value;
    var mode = form.elements.namedItem("mode").value;
    var answer = document.getElementById("answer");
    if (!answer) return;
    if (current) current.close();

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
    var params = new URLSearchParams();
    params.set("question", question);
    params.set("mode", mode);
    var source = new EventSource("/ask/stream?" + params.toString());
    current = source;

    function end() {
      finished = true;
      source.close();
      if (current === source) current = null;
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

    function serverHtml(event) {
      // A verbatim figure or a data result, made by the server's HTML renderer.
      var data = JSON.parse(event.data);
      items.insertAdjacentHTML("beforeend", data.html);
      prose = null;
    }

    source.addEventListener("stage", function (event) {
      var data = JSON.parse(event.data);
      if (data.stage === "retry") {
        items.textContent = "";
        prose = null;
        status.textContent = "Draft: the first reply failed its check; the model is trying again.";
      }
    });
    source.addEventListener("prose", function (event) {
      var data = JSON.parse(event.data);
      var piece = document.createElement("span");
      piece.textContent = data.text; // model text: never parsed as HTML
      proseBox().appendChild(piece);
    });
    source.addEventListener("quote", serverHtml);
    source.addEventListener("data", serverHtml);
    source.addEventListener("dropped", function (event) {
      var data = JSON.parse(event.data);
      items.appendChild(
        element("p", "draft-dropped", "A quote did not match the source and is not shown (" + data.reason + ").")
      );
      prose = null;
    });
    source.addEventListener("final", function (event) {
      var data = JSON.parse(event.data);
      end();
      answer.innerHTML = data.html; // the checked answer, rendered by the server
    });
    source.addEventListener("failure", function (event) {
      var data = JSON.parse(event.data);
      end();
      showError(answer, data.message);
    });
    source.onerror = function () {
      if (finished) return;
      end(); // never let EventSource reconnect: that would ask again
      showError(answer, "The connection to the server was lost before the answer was complete.");
    };
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
      if (!stream || !stream.checked || typeof window.EventSource !== "function") return;
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
