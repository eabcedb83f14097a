"""Stage 2, the emitters: everything `petgen build` writes into dist/ from a loaded knowledge base
(JSON API, pages, search index, OpenAPI, discovery documents, llms.txt, CDN rules)."""
