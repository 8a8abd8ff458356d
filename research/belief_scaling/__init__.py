"""The belief network's learning curve: AUC per head against the hands it trained on."""
