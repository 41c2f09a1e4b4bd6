"""Excel-to-report workflow (LangGraph): spreadsheet in, verifiable narrative report out."""
