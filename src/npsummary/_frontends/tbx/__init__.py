"""The tensorboardX / torch.utils.tensorboard SummaryWriter: its method groups, FileWriter,
scalar export and the import patch."""
