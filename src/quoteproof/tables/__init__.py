"""Tables: CSV and JSON documents of the index queried deterministically.

The layer under the agent's `table_query` and `aggregate` tools; no language model
here. `table` reads a stored document back into rows, `query` filters, projects
and aggregates them, `period` describes a date range, `session` keeps the result
pointers of one answer, `args` checks a model's JSON arguments, `quoted` reads the
rows a quote covers. Import each from its module: the package loads none of them,
so a question that opens no table loads no table engine.
"""
