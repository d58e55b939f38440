"""Text helpers that ingest, quoting and render share: chunk labels (`labels`),
spans of a text trimmed to its words and sentences (`spans`) and list numbers written
without a mark (`numbering`). They import nothing of the package but the base layer,
so no reader of a label or a span depends on the parsers."""
