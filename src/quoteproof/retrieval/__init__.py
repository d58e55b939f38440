"""Retrieval: BM25 and dense lists, rank fusion, reranking, and refusal evidence."""
