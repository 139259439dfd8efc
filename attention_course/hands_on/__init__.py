"""The hands-on module (module 08): the training runs the build does with the reference pieces, for the page's
reference curves and quoted numbers."""
