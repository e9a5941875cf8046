"""codea1.eval"""
