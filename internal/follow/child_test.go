package follow

const childEnv = "SHAKEDOWN_FOLLOW_CHILD"

func child() int { return 0 }
