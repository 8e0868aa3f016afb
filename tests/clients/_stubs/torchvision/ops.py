def box_iou(boxes1, boxes2):
    raise NotImplementedError("torchvision stand-in: box_iou is not used by these tests")
