"""Pictures of the search-distillation run that produced the shipped ``distill`` network."""
