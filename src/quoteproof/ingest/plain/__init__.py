"""Plain-text formats, whose canonical text is the file as it is (decoded, line ends
made `\\n`): text files (`text.parse_text`), Markdown (`markdown.parse_markdown`)
and tables in CSV, TSV or JSON (`tables`). Named `plain`, not `text`, so that it is
not taken for `quoteproof.text`, the text helpers every layer above the base shares."""
