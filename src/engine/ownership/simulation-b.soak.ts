import { soak } from './simulation.soak-support';

soak(1, 2);
