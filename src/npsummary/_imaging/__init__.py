"""Image arrays: the one ``dataformats`` parser, pixel value rules (dtype to uint8, TF1/TF2
normalisation), axis layouts, grids of images, kernels and feature maps, and drawing boxes."""
