"""Builder of the bundled EdgeMMEval-format dataset (rows, images, audio); see scripts/build_dataset.py."""
