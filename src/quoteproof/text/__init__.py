"""Text helpers that ingest, quoting and render share: chunk labels (`labels`) and
spans of a text trimmed to its words and sentences (`spans`). They import nothing of
the package but the base layer, so no reader of a label or a span depends on the
parsers."""
