class LBFGS: pass
