"""The flows of the course modules, shared by notebooks, labs and checks."""
