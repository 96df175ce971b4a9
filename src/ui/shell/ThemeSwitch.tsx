/** Light, dark or system: a three-way switch, remembered across tabs and visits. */
import { Icon, type IconName } from '../components/icons';
import { useTheme, type ThemeChoice } from '../state/theme';
import styles from './ThemeSwitch.module.css';

const options: { value: ThemeChoice; label: string; icon: IconName }[] = [
  { value: 'light', label: 'Light', icon: 'sun' },
  { value: 'dark', label: 'Dark', icon: 'moon' },
  { value: 'system', label: 'System', icon: 'monitor' },
];

export function ThemeSwitch() {
  const choice = useTheme((state) => state.choice);
  const choose = useTheme((state) => state.choose);
  return (
    <div className={styles.wrap}>
      <span className={styles.caption} id="theme-caption">
        Theme
      </span>
      <div
        className={styles.switch}
        role="radiogroup"
        aria-labelledby="theme-caption"
        data-testid="shell.theme"
      >
        {options.map((option) => (
          <button
            key={option.value}
            type="button"
            role="radio"
            aria-checked={choice === option.value}
            className={styles.option}
            onClick={() => choose(option.value)}
            aria-label={`${option.label} theme`}
            title={`${option.label} theme`}
            data-testid={`shell.theme-${option.value}`}
          >
            <Icon name={option.icon} size={15} />
            <span className="visually-hidden">{option.label}</span>
          </button>
        ))}
      </div>
    </div>
  );
}
