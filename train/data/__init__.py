"""The opponent-modelling dataset: schema, reader, torch dataset and generator."""
