"""Stage 1, the content: loading and parsing entries, the model, validation against the content
guide, the knowledge base, the /ask lexicon, the bot registry, text normalisation."""
